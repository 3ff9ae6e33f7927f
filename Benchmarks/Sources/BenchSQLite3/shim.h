#ifndef PLD_BENCH_SQLITE_SHIM_H
#define PLD_BENCH_SQLITE_SHIM_H

#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro around a cast that Swift cannot import.
static inline sqlite3_destructor_type pld_bench_sqlite_transient(void) {
  return SQLITE_TRANSIENT;
}

#endif
