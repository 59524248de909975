// Runs before the page paints: the saved theme, else the system's, so there is no flash.
(function () {
  var saved = null;
  try { saved = localStorage.getItem("theme"); } catch (e) { /* storage may be off */ }
  var dark = window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches;
  var theme = saved === "light" || saved === "dark" ? saved : dark ? "dark" : "light";
  document.documentElement.setAttribute("data-theme", theme);
  document.documentElement.classList.add("js");
})();
