// The preview's page script (builder/serve.py adds it to served pages only, never to site/).
// The server says over Server-Sent Events which site files changed, the build's errors and
// which lessons are being re-recorded. A page reloads only when its own file changed (the
// browser keeps its scroll position on a reload); errors show in an overlay that the next
// good build clears.
(function () {
  "use strict";
  var here = location.pathname.replace(/^\/+/, "");
  if (here === "" || here.slice(-1) === "/") here += "index.html";

  function box(id, css) {
    var found = document.getElementById(id);
    if (found) return found;
    var made = document.createElement("div");
    made.id = id;
    made.setAttribute("role", "alert");
    made.style.cssText = css;
    document.body.appendChild(made);
    return made;
  }

  function drop(id) {
    var found = document.getElementById(id);
    if (found) found.remove();
  }

  function overlay(errors) {
    if (!errors.length) return drop("coursebuilder-preview-error");
    var shown = box(
      "coursebuilder-preview-error",
      "position:fixed;inset:auto 1em 1em 1em;max-height:60vh;overflow:auto;z-index:2147483647;" +
        "margin:0;padding:1em;background:#fde8e8;color:#611;border:2px solid #c00;" +
        "font:14px/1.4 ui-monospace,monospace;white-space:pre-wrap"
    );
    shown.textContent = "";
    var title = document.createElement("strong");
    title.textContent = "The last build failed; this page is from the last good one.";
    shown.appendChild(title);
    errors.forEach(function (error) {
      var line = document.createElement("div");
      line.className = "coursebuilder-preview-problem";
      var where = error.file + (error.line ? ":" + error.line : "");
      line.textContent = (where ? where + ": " : "") + error.message;
      shown.appendChild(line);
    });
  }

  function recording(on) {
    if (!on) return drop("coursebuilder-preview-recording");
    box(
      "coursebuilder-preview-recording",
      "position:fixed;top:1em;right:1em;z-index:2147483647;padding:.4em .8em;" +
        "background:#fff8d6;color:#543;border:1px solid #b90;font:14px sans-serif"
    ).textContent = "re-recording\u2026";
  }

  var events = new EventSource("/__events");
  events.addEventListener("state", function (event) {
    var state = JSON.parse(event.data);
    if (state.changed.indexOf(here) >= 0) {
      events.close();
      location.reload();
      return;
    }
    overlay(state.errors);
    recording(state.recording.indexOf(here) >= 0);
  });
})();
