extension InspectorPage {
  /// The part of the page's ``script`` that groups the keys under a `/` prefix (a collection's members):
  /// a header per group with its count, closed and opened by a click. Inserted inside the script's
  /// function, whose `groups`, `rows`, `el`, `groupOf`, `isShown` and `select` it uses.
  static let keyGroupsScript = #"""
      // MARK: groups of keys under a "/" prefix, each with its count, closed and opened by a click

      function makeGroup(prefix) {
        const header = el("div", "group");
        header.setAttribute("role", "row");
        header.dataset.group = prefix;
        header.append(el("span", "twisty"), el("span", "cell key", prefix), el("span", "muted count"));
        const g = { header: header, count: 0, collapsed: false };
        groups.set(prefix, g);
        return g;
      }
      function updateGroup(g) {
        g.header.children[0].textContent = g.collapsed ? "\u25B8" : "\u25BE";
        g.header.children[2].textContent = g.count + (g.count === 1 ? " key" : " keys");
        g.header.setAttribute("aria-expanded", String(!g.collapsed));
      }
      function toggleGroup(prefix) {
        const g = groups.get(prefix);
        if (!g) return;
        g.collapsed = !g.collapsed;
        updateGroup(g);
        for (const [key, tr] of rows) if (groupOf(key) === prefix) tr.hidden = !isShown(key);
        if (selected !== null && groupOf(selected) === prefix && g.collapsed) select(null, false);
      }
    """#
}
