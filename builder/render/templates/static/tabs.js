// Content tabs (builder/render/tabs.py). The page's HTML shows every panel in turn under its
// title, so a group reads whole without JavaScript and on paper; here each group becomes an
// ARIA tabs widget: a tablist of buttons named by the titles (each panel then labelled by
// its tab, its own title hidden), one panel shown. Click or the arrow keys pick a tab (the
// focus follows, one tab stop a group), Home and End the first and the last. An address
// that names something inside a hidden panel shows that panel.
(function () {
  "use strict";
  var bound = new WeakSet();

  function select(group, index, focus) {
    group.tabs.forEach(function (tab, at) {
      var chosen = at === index;
      tab.setAttribute("aria-selected", String(chosen));
      tab.tabIndex = chosen ? 0 : -1;
      group.panels[at].hidden = !chosen;
    });
    if (focus) group.tabs[index].focus();
  }

  var MOVES = {
    ArrowRight: function (at, n) { return (at + 1) % n; },
    ArrowLeft: function (at, n) { return (at - 1 + n) % n; },
    Home: function () { return 0; },
    End: function (at, n) { return n - 1; }
  };

  function bind(box) {
    if (bound.has(box)) return;
    var panels = Array.prototype.filter.call(box.children, function (child) {
      return child.classList.contains("tab-panel") && child.id;
    });
    if (!panels.length) return;
    bound.add(box);
    var list = document.createElement("div");
    list.className = "tab-list";
    list.setAttribute("role", "tablist");
    var group = { tabs: [], panels: panels };
    panels.forEach(function (panel, at) {
      var title = panel.querySelector(":scope > .tab-title");
      var tab = document.createElement("button");
      tab.type = "button";
      tab.id = panel.id + "-tab";
      tab.setAttribute("role", "tab");
      tab.setAttribute("aria-controls", panel.id);
      tab.textContent = title ? title.textContent : String(at + 1);
      tab.addEventListener("click", function () { select(group, at, false); });
      list.appendChild(tab);
      group.tabs.push(tab);
      if (title) title.hidden = true;  // the tab names the panel now (print shows it again)
      panel.setAttribute("role", "tabpanel");
      panel.setAttribute("aria-labelledby", tab.id);
      panel.tabIndex = 0;
    });
    list.addEventListener("keydown", function (event) {
      var move = MOVES[event.key];
      var at = group.tabs.indexOf(document.activeElement);
      if (!move || at < 0 || event.altKey || event.ctrlKey || event.metaKey) return;
      event.preventDefault();
      select(group, move(at, group.tabs.length), true);
    });
    box.insertBefore(list, panels[0]);
    box.tabGroup = group;
    select(group, 0, false);
  }

  // An address (#id) inside a hidden panel: that panel is shown, the target scrolled to.
  function reveal() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    var shown = false;
    for (var at = target; at; at = at.parentElement) {
      if (at.getAttribute && at.getAttribute("role") === "tabpanel" && at.hidden) {
        var group = at.parentElement.tabGroup;
        select(group, group.panels.indexOf(at), false);
        shown = true;
      }
    }
    if (shown) target.scrollIntoView();
  }

  function bindAll() { document.querySelectorAll("main .tabs").forEach(bind); }
  bindAll();
  if (location.hash) reveal();
  window.addEventListener("hashchange", reveal);
  // The preview (builder/preview/live.js) swapped parts of <main>: the new groups too.
  document.addEventListener("coursebuilder:patched", bindAll);
})();
