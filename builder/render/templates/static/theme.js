// Runs before the page paints, so there is no flash of the wrong theme: the reader's
// choice ("light", "dark", or none saved: follow the system), then the theme it gives.
// The theme control (site.js) calls coursebuilderTheme(choice) to change it.
(function () {
  var html = document.documentElement;
  var system = window.matchMedia ? matchMedia("(prefers-color-scheme: dark)") : null;
  function saved() {
    var value = null;
    try { value = localStorage.getItem("theme"); } catch (e) { /* storage may be off */ }
    return value === "light" || value === "dark" ? value : "system";
  }
  function apply(choice) {
    var theme = choice !== "system" ? choice : system && system.matches ? "dark" : "light";
    html.setAttribute("data-theme-choice", choice);
    html.setAttribute("data-theme", theme);
    html.dispatchEvent(new Event("coursebuilder:theme"));
  }
  window.coursebuilderTheme = function (choice) {
    try {
      if (choice === "system") localStorage.removeItem("theme");
      else localStorage.setItem("theme", choice);
    } catch (e) { /* kept for this page only */ }
    apply(choice);
  };
  apply(saved());
  html.classList.add("js");
  // Following the system: a change of the system's theme shows at once. Another tab's
  // choice is this one's too.
  function follow() { if (html.getAttribute("data-theme-choice") === "system") apply("system"); }
  if (system && system.addEventListener) system.addEventListener("change", follow);
  window.addEventListener("storage", function (event) { if (event.key === "theme") apply(saved()); });
})();
