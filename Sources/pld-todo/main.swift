print("pld-todo")
