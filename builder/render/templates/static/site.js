// The reader's site: theme control, mobile navigation, recorded values' notes, copy buttons,
// the section being read, keys for the previous and next lesson, search (glossary cards:
// cards.js; content tabs: tabs.js).
// Every feature works from disk (file://) except search, which says so.
(function () {
  "use strict";
  var html = document.documentElement;
  // Elements given their handlers (the preview swaps parts of <main>: see the end).
  var bound = new WeakSet();
  function once(el) { return !bound.has(el) && !!bound.add(el); }

  // -- The site's root, kept under its title, so that its 404 page, served at any depth,
  // finds the root without asking the host for files that are not there (404.html).
  if (location.protocol !== "file:") {
    try {
      var root = new URL(html.getAttribute("data-root") || "./", document.baseURI).pathname;
      localStorage.setItem("coursebuilder-root " + html.getAttribute("data-site"), root);
    } catch (e) { /* storage may be off */ }
  }

  // -- The printable course's Print button (print/index.html): shown only where it works, so
  // that a phone, whose browser hides its Print command in a menu, has one on the page.
  var printing = document.querySelector("[data-print]");
  if (printing && typeof window.print === "function") {
    printing.hidden = false;
    printing.querySelector("button").addEventListener("click", function () { window.print(); });
  }

  // -- Theme: light, dark, or follow the system (theme.js applies it before the page paints;
  // the choice persists). One button steps through the three: from following the system to
  // the other theme, then the system's own, then back to following it, so every press but
  // the last changes what the page looks like; its name says the state and what comes next.
  var toggle = document.querySelector(".theme-toggle");
  function systemTheme() {
    return window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }
  function nextChoice(choice) {
    var other = systemTheme() === "dark" ? "light" : "dark";
    return choice === "system" ? other : choice === other ? systemTheme() : "system";
  }
  function showTheme() {
    var choice = html.getAttribute("data-theme-choice") || "system";
    var theme = html.getAttribute("data-theme");
    var next = nextChoice(choice);
    var shown = choice === "system" ? "auto" : choice;
    toggle.textContent = "Theme: " + shown;
    var now = choice === "system" ? "auto, following the system (" + theme + " now)" : shown;
    var label = "Theme: " + now + "; press for " + (next === "system" ? "the system's" : next);
    toggle.setAttribute("aria-label", label);
    toggle.title = label;
  }
  if (toggle && window.coursebuilderTheme) {
    toggle.hidden = false;
    showTheme();
    toggle.addEventListener("click", function () {
      window.coursebuilderTheme(nextChoice(html.getAttribute("data-theme-choice") || "system"));
    });
    html.addEventListener("coursebuilder:theme", showTheme);
  }

  // -- Mobile navigation: a button that opens and closes the sidebar. --------------------
  var menu = document.querySelector(".menu-button");
  var sidebar = document.getElementById("sidebar");
  function setMenu(open, focus) {
    menu.setAttribute("aria-expanded", String(open));
    document.body.classList.toggle("nav-open", open);
    if (open && focus) {
      var first = sidebar.querySelector("a[aria-current=page]") || sidebar.querySelector("a");
      if (first) first.focus();
    }
    if (!open && focus) menu.focus();
  }
  if (menu && sidebar) {
    menu.hidden = false;
    menu.addEventListener("click", function () {
      setMenu(menu.getAttribute("aria-expanded") !== "true", true);
    });
  }

  // -- Recorded values' notes: open on hover or focus (CSS); Escape dismisses; kept on
  // screen. (An Escape that closed a glossary card, cards.js, is spent.)
  function terms() { return document.querySelectorAll(".rv-mark"); }
  document.addEventListener("keydown", function (event) {
    if (event.key !== "Escape" || event.defaultPrevented) return;
    var dismissed = false;
    terms().forEach(function (term) {
      if (term.matches(":hover") || term.contains(document.activeElement)) {
        term.classList.add("dismissed");
        dismissed = true;
      }
    });
    if (!dismissed && menu && menu.getAttribute("aria-expanded") === "true") setMenu(false, true);
  });
  // A popup card kept on screen, a value's note here and a glossary card in cards.js (which
  // runs after this script and calls it as window.coursebuilderPlace): moved left where it
  // would pass the window's right edge, and opened upwards (its term gets .above) where it
  // would pass the window's foot and there is room above the term.
  function place(term, card) {
    card.style.left = "";
    term.classList.remove("above");
    requestAnimationFrame(function () {
      var rect = card.getBoundingClientRect();
      var over = rect.right - (document.documentElement.clientWidth - 8);
      if (over > 0) card.style.left = -Math.min(over, rect.left - 8) + "px";
      var room = term.getBoundingClientRect().top - 8;
      if (rect.bottom > window.innerHeight - 8 && rect.height < room) term.classList.add("above");
    });
  }
  window.coursebuilderPlace = place;
  function placeNote(term) {
    var card = term.querySelector(".rv-note");
    if (card) place(term, card);
  }
  function bindTerm(term) {
    if (!once(term)) return;
    term.addEventListener("mouseenter", function () { placeNote(term); });
    term.addEventListener("focusin", function () { term.classList.remove("dismissed"); placeNote(term); });
    term.addEventListener("mouseleave", function () {
      if (!term.contains(document.activeElement)) term.classList.remove("dismissed");
    });
    term.addEventListener("focusout", function (event) {
      if (!term.contains(event.relatedTarget)) term.classList.remove("dismissed");
    });
  }
  terms().forEach(bindTerm);

  // -- Copy buttons: copy the code only, never output or prompts. -------------------------
  var PROMPT = /^(>>> |\.\.\. |\$ )/;
  function codeOf(pre) {
    var bare = pre.cloneNode(true);  // a code note's badge is not code (code_notes.py)
    bare.querySelectorAll("a.code-note").forEach(function (badge) { badge.remove(); });
    var lines = bare.textContent.replace(/\n$/, "").split("\n");
    var prompted = lines.filter(function (line) { return PROMPT.test(line); });
    if (!prompted.length) return lines.join("\n") + "\n";
    return prompted.map(function (line) { return line.replace(PROMPT, ""); }).join("\n") + "\n";
  }
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    var ok = document.execCommand("copy");
    document.body.removeChild(area);
    return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }
  var COPIED = ".prose pre.highlight, .run-it pre.highlight";
  function addCopy(pre) {
    if (pre.closest("figure.output") || !once(pre)) return;
    var wrap = pre.parentElement;
    if (!wrap.classList.contains("code-wrap")) {
      wrap = document.createElement("div");
      wrap.className = "code-wrap";
      pre.parentNode.insertBefore(wrap, pre);
      wrap.appendChild(pre);
    }
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    // What it says is what it is called, and a change of it is announced (aria-live).
    function say(text, name) { button.textContent = text; button.setAttribute("aria-label", name); }
    say("Copy", "Copy code");
    button.setAttribute("aria-live", "polite");
    button.addEventListener("click", function () {
      copyText(codeOf(pre)).then(
        function () { say("Copied", "Copied"); },
        function () { say("Copy failed", "Copy failed"); }
      );
      setTimeout(function () { say("Copy", "Copy code"); }, 2000);
    });
    wrap.insertBefore(button, pre);
  }
  document.querySelectorAll(COPIED).forEach(addCopy);

  // -- Blocks wider than their column: the edge that hides more is shaded (data-more: left,
  // right or both; CSS draws it), and recorded output gets a button that wraps its lines.
  var scrollers = [], watched = new WeakSet();
  function markMore(box) {
    var left = box.scrollLeft > 1;
    var right = box.scrollLeft + box.clientWidth < box.scrollWidth - 1;
    var more = left && right ? "both" : left ? "left" : right ? "right" : "";
    if (more) box.setAttribute("data-more", more); else box.removeAttribute("data-more");
    // A named block is a tab stop (for the arrow keys) only while there is something to
    // scroll to: one that shows all it holds is no stop on the way through the page.
    if (box.getAttribute("role") !== "region") return;
    var scrolls = box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1;
    if (scrolls) box.setAttribute("tabindex", "0");
    else if (document.activeElement !== box) box.removeAttribute("tabindex");
  }
  function wrapButton(pre) {
    // Recorded output (a figure's, or a cell's): its caption holds the button, or, where
    // the page's one caption is elsewhere (cells), a small bar above the output does.
    var figure = pre.classList.contains("output") && pre.closest("figure");
    if (!figure) return;
    var button = pre.wrapToggle;
    var long = pre.classList.contains("wrapped") || pre.scrollWidth > pre.clientWidth + 1;
    if (!long) { if (button) button.hidden = true; return; }
    if (!button) {
      button = pre.wrapToggle = document.createElement("button");
      button.type = "button";
      button.className = "wrap-toggle";
      button.textContent = "Wrap long lines";
      button.setAttribute("aria-pressed", "false");
      button.addEventListener("click", function () {
        var wrapped = pre.classList.toggle("wrapped");
        button.setAttribute("aria-pressed", String(wrapped));
        markMore(pre);
      });
      var caption = figure.classList.contains("output") && figure.querySelector("figcaption");
      if (caption) caption.appendChild(button);
      else {
        var bar = document.createElement("div");
        bar.className = "output-tools";
        bar.appendChild(button);
        pre.parentNode.insertBefore(bar, pre);
      }
    }
    button.hidden = false;
  }
  function measure() {
    scrollers.forEach(function (box) { markMore(box); if (box.tagName === "PRE") wrapButton(box); });
  }
  // Whatever changes a block's width or what it holds: the window, a <details> opened, a
  // late font or image, the theme.
  var resized = window.ResizeObserver && new ResizeObserver(function (entries) {
    entries.forEach(function (entry) {
      markMore(entry.target);
      if (entry.target.tagName === "PRE") wrapButton(entry.target);
    });
  });
  function watchScrollers() {  // on load, and for the blocks a preview patch brought in
    scrollers = Array.prototype.slice.call(document.querySelectorAll("main pre, main .table-scroll, main .math-scroll"));
    scrollers.forEach(function (box) {
      if (watched.has(box)) return;
      watched.add(box);
      box.addEventListener("scroll", function () { markMore(box); }, { passive: true });
      if (resized) resized.observe(box);
    });
    measure();
  }
  watchScrollers();
  window.addEventListener("resize", measure);
  window.addEventListener("load", measure);
  document.addEventListener("toggle", measure, true);

  // -- Keys for the previous and next lesson, as mkdocs-material has them: p or comma, n or
  // full stop. Not while typing in a field, nor with Ctrl, Alt or Cmd (the browser's own).
  var KEYS = { p: "prev", ",": "prev", n: "next", ".": "next" };
  var keysHint = document.querySelector(".pager-keys");
  if (keysHint && document.querySelector(".pager a[rel]")) keysHint.hidden = false;
  document.addEventListener("keydown", function (event) {
    var rel = KEYS[event.key];
    if (!rel || event.defaultPrevented || event.ctrlKey || event.altKey || event.metaKey) return;
    var at = event.target;
    if (at.isContentEditable || (at.closest && at.closest("input, textarea, select"))) return;
    var link = document.querySelector(".pager a[rel=" + rel + "]");
    if (!link) return;
    event.preventDefault();
    location.href = link.href;
  });

  // -- Folded sections (a lab's solution): an address or a contents link that names a
  // section inside one opens it, rather than scroll to nothing.
  function unfold() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    var opened = false;
    for (var at = target; at; at = at.parentElement) {
      if (at.tagName === "DETAILS" && !at.open) opened = at.open = true;
    }
    if (opened) target.scrollIntoView();
  }
  if (location.hash) unfold();
  window.addEventListener("hashchange", unfold);

  // -- On-page contents: mark the section being read. A heading "is being read" once it has
  // passed the top quarter of the window; at the end of the page, the last one in view.
  // IntersectionObserver says when a heading crosses that line, or the page's end shows.
  // (watchToc's body is left at the indentation it had before it was a function.)
  var unwatch = function () {};
  function watchToc() {
  unwatch();
  var toc = document.querySelector("nav.toc");
  if (toc && window.IntersectionObserver) {
    var links = {};
    toc.querySelectorAll("a[href^='#']").forEach(function (link) {
      links[decodeURIComponent(link.getAttribute("href").slice(1))] = link;
    });
    var heads = Array.prototype.filter.call(
      document.querySelectorAll("main h2[id], main h3[id]"),
      function (head) { return links.hasOwnProperty(head.id); }
    );
    var reading = null;
    var markReading = function () {
      var line = window.innerHeight / 4;
      var end = window.innerHeight + window.scrollY >= html.scrollHeight - 2;
      var found = null;
      heads.forEach(function (head) {
        if (!head.getClientRects().length) return;  // in a closed <details>: not on screen
        var top = head.getBoundingClientRect().top;
        if (top < line || (end && top < window.innerHeight)) found = head;
      });
      var link = found ? links[found.id] : null;
      if (link === reading) return;
      if (reading) { reading.classList.remove("active"); reading.removeAttribute("aria-current"); }
      if (link) {
        link.classList.add("active");
        link.setAttribute("aria-current", "location");
        // Kept in view when the contents scroll in their own column.
        var box = toc.getBoundingClientRect(), at = link.getBoundingClientRect();
        if (getComputedStyle(toc).position === "sticky" && (at.top < box.top || at.bottom > box.bottom)) {
          toc.scrollTop += at.top - box.top - box.height / 2;
        }
      }
      reading = link;
    };
    var crossing = new IntersectionObserver(markReading, { rootMargin: "0px 0px -75% 0px" });
    heads.forEach(function (head) { crossing.observe(head); });
    var pageEnd = document.querySelector(".page-end");
    var ending = new IntersectionObserver(markReading);
    if (pageEnd) ending.observe(pageEnd);
    // A jump (Home, End, a link) can carry every heading past the line between two looks.
    document.addEventListener("scrollend", markReading);
    unwatch = function () {
      crossing.disconnect();
      ending.disconnect();
      document.removeEventListener("scrollend", markReading);
      if (reading) { reading.classList.remove("active"); reading.removeAttribute("aria-current"); }
    };
    markReading();
  }
  }
  watchToc();

  // -- The preview (builder/preview/live.js) swapped parts of <main> in place: the new
  // elements get their handlers, and the contents follow the new headings.
  document.addEventListener("coursebuilder:patched", function () {
    terms().forEach(bindTerm);
    document.querySelectorAll(COPIED).forEach(addCopy);
    watchScrollers();
    watchToc();
  });
})();
