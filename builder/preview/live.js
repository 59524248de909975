// The preview's page script (builder/preview/serve.py adds it to served pages only, never to
// site/, stamped with the build the page is from). The server says over Server-Sent Events
// which site files changed, the build's errors and which lessons are being re-recorded; a
// page whose own file changed is sent its new <main> and title, and swaps in only what
// changed, keeping the scroll position (the first block in view stays where it was), open
// <details>, focus and theme; its changed figures are fetched again. A template edit, or a
// stylesheet or script the page loads, reloads it. Errors show in an overlay that the next
// good build clears. After a swap, "coursebuilder:patched" is dispatched on document (its
// detail.added: the elements put in), so site.js binds its handlers to the new elements.
(function () {
  "use strict";
  var here = location.pathname.replace(/^\/+/, "");
  if (here === "" || here.slice(-1) === "/") here += "index.html";
  var build = document.currentScript ? document.currentScript.getAttribute("data-build") : "";
  var main = document.querySelector("main");
  // <main> as the server sent it: this script runs before the deferred ones (site.js, nav.js)
  // add buttons or classes, so it is what the next version is compared with.
  var served = main ? main.cloneNode(true) : null;
  // The stylesheets and scripts the page itself loads (not those added later, such as
  // the search bundles'): one of them changed, the page reloads. nav.js is the sidebar's data, run
  // again in place.
  var assets = Array.prototype.slice.call(document.querySelectorAll("link[rel=stylesheet][href], script[src]"));
  var DATA = /(^|\/)static\/nav\.js$/;
  var versions = {}; // a figure's file -> the ?v= it is fetched with since it changed

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

  // -- Site files named in the page, by their path from the site's root. -----------------
  function fileOf(address) {
    try {
      return decodeURI(new URL(address, location.href).pathname).replace(/^\/+/, "");
    } catch (e) {
      return "";
    }
  }
  function reloads(changed) {
    return assets.some(function (el) {
      var name = fileOf(el.getAttribute("href") || el.getAttribute("src"));
      return changed.indexOf(name) >= 0 && !DATA.test(name);
    });
  }
  function rerunData(changed) {
    assets.forEach(function (el, n) {
      var name = el.tagName === "SCRIPT" && fileOf(el.getAttribute("src"));
      if (!name || !DATA.test(name) || changed.indexOf(name) < 0) return;
      var again = document.createElement("script");
      again.src = el.getAttribute("src").split("?")[0] + "?v=" + Date.now();
      el.replaceWith(again);
      assets[n] = again;
    });
  }
  // A changed file that keeps its address (an image among a lesson's data files; a chart's
  // is named by what it draws, so a changed chart is a new address): fetched again under a
  // new ?v= (the browser keeps an image it showed by its address, whatever Cache-Control says).
  var LINKED = [["img", "src"], ["source", "srcset"], ["object", "data"], ["image", "href"]];
  function bust(changed) {
    var stamp = String(Date.now());
    changed.forEach(function (name) {
      if (!/\.(html|css|js)$/.test(name)) versions[name] = stamp;
    });
  }
  function refetch(root) {
    LINKED.forEach(function (pair) {
      root.querySelectorAll(pair[0] + "[" + pair[1] + "]").forEach(function (el) {
        var address = el.getAttribute(pair[1]);
        var version = versions[fileOf(address)];
        if (!version || address.indexOf("v=" + version) >= 0) return;
        el.setAttribute(pair[1], address.split("?")[0] + "?v=" + version);
      });
    });
  }

  // -- The swap: what the reader sees, kept. ----------------------------------------------
  // The blocks in view, top first (not navigation: the contents may be sticky); after the
  // swap, the first still in the page (or its new self, by id) goes back where it was.
  var BLOCKS = "h1,h2,h3,h4,h5,h6,p,li,dt,dd,pre,figure,table,details,blockquote,img";
  function inView() {
    var found = [];
    main.querySelectorAll(BLOCKS).forEach(function (el) {
      if (el.closest("nav")) return;
      var rect = el.getBoundingClientRect();
      if (rect.height && rect.bottom > 0 && rect.top < window.innerHeight) {
        found.push({ node: el, id: el.id, top: rect.top });
      }
    });
    return found;
  }
  function keepInView(seen) {
    for (var n = 0; n < seen.length; n++) {
      var node = seen[n].node.isConnected ? seen[n].node : seen[n].id && document.getElementById(seen[n].id);
      if (node && node.getClientRects().length) {
        window.scrollBy(0, node.getBoundingClientRect().top - seen[n].top);
        return;
      }
    }
  }
  // Each <details> by its summary's text (and which of that text it is): open or not.
  function folds(apply) {
    var count = {};
    main.querySelectorAll("details").forEach(function (el) {
      var summary = el.querySelector("summary");
      var text = summary ? summary.textContent.trim() : "";
      count[text] = (count[text] || 0) + 1;
      apply(el, text + "\u0000" + count[text]);
    });
  }
  function focusable() {
    return Array.prototype.slice.call(main.querySelectorAll("a[href],button,summary,input,select,textarea,[tabindex]"));
  }

  function same(a, b) {
    if (a.nodeType !== b.nodeType) return false;
    return a.nodeType === 1 ? a.outerHTML === b.outerHTML : a.nodeValue === b.nodeValue;
  }
  function attributes(el) {
    var all = [];
    for (var n = 0; n < el.attributes.length; n++) {
      var at = el.attributes[n];
      if (at.name !== "open") all.push(at.name + "=" + at.value);
    }
    return all.sort().join("\u0000");
  }
  function alike(live, old, fresh) {
    return live.nodeType === 1 && old.nodeType === 1 && fresh.nodeType === 1 &&
      live.tagName === old.tagName && old.tagName === fresh.tagName &&
      attributes(old) === attributes(fresh) && attributes(live) === attributes(old);
  }
  // `live`'s children become `fresh`'s: the children equal in `old` (what the server sent
  // last) and `fresh` are kept, with all the page did to them; a changed element that is
  // still the same element is changed within; the rest is replaced. Where the page added or
  // removed children (site.js wraps a code block), the whole level is replaced.
  function morph(live, old, fresh, added) {
    var lives = Array.prototype.slice.call(live.childNodes);
    var olds = old.childNodes, news = fresh.childNodes;
    var n;
    var put = function (node, before) {
      var made = document.importNode(node, true);
      live.insertBefore(made, before);
      if (made.nodeType === 1) added.push(made);
    };
    if (lives.length !== olds.length) {
      lives.forEach(function (node) { live.removeChild(node); });
      for (n = 0; n < news.length; n++) put(news[n], null);
      return;
    }
    var start = 0, endOld = olds.length, endNew = news.length;
    while (start < endOld && start < endNew && same(olds[start], news[start])) start++;
    while (endOld > start && endNew > start && same(olds[endOld - 1], news[endNew - 1])) {
      endOld--;
      endNew--;
    }
    if (endOld - start === endNew - start) {
      for (n = start; n < endOld; n++) {
        if (alike(lives[n], olds[n], news[n])) {
          morph(lives[n], olds[n], news[n], added);
        } else {
          put(news[n], lives[n]);
          live.removeChild(lives[n]);
        }
      }
      return;
    }
    var after = lives[endOld] || null;
    for (n = start; n < endOld; n++) live.removeChild(lives[n]);
    for (n = start; n < endNew; n++) put(news[n], after);
  }

  function patch(page) {
    var parsed = document.createElement("template");
    parsed.innerHTML = page.main;
    var fresh = parsed.content.querySelector("main");
    if (!main || !served || !fresh) return location.reload();
    var seen = inView();
    var open = {};
    folds(function (el, key) { open[key] = el.open; });
    var focused = document.activeElement;
    var focusAt = main.contains(focused) ? focusable().indexOf(focused) : -1;
    var added = [];
    if (attributes(fresh) !== attributes(main)) {
      Array.prototype.slice.call(main.attributes).forEach(function (a) { main.removeAttribute(a.name); });
      Array.prototype.slice.call(fresh.attributes).forEach(function (a) { main.setAttribute(a.name, a.value); });
    }
    morph(main, served, fresh, added);
    served = fresh;
    if (typeof page.title === "string") document.title = page.title;
    folds(function (el, key) {
      if (open.hasOwnProperty(key) && el.open !== open[key]) el.open = open[key];
    });
    if (focusAt >= 0 && !focused.isConnected) {
      var again = (focused.id && document.getElementById(focused.id)) || focusable()[focusAt];
      if (again && again.tagName === focused.tagName) again.focus({ preventScroll: true });
    }
    refetch(main);
    document.dispatchEvent(new CustomEvent("coursebuilder:patched", { detail: { added: added } }));
    keepInView(seen);
  }

  var address = "/__events?page=" + encodeURIComponent(here) + (build ? "&build=" + build : "");
  var events = new EventSource(address);
  events.addEventListener("state", function (event) {
    var state = JSON.parse(event.data);
    var page = state.page;
    if ((page && page.reload) || reloads(state.changed)) {
      events.close();
      location.reload();
      return;
    }
    bust(state.changed);
    if (page) patch(page);
    else if (main) refetch(main);
    rerunData(state.changed);
    overlay(state.errors);
    recording(state.recording.indexOf(here) >= 0);
  });
})();
