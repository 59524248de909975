// Search: the box in the header of every page (and the search page's own box), over the
// pages' text each search bundle holds as a script (offline.js), served or opened from
// disk alike, so both find the same results; the searched words marked on the page a
// result leads to.
// Keys: "/" or Ctrl/Cmd-K focus the box (not while typing in another field); arrows move
// through the results, Enter opens one, Escape closes them and goes back to where you were.
// Without JavaScript the box is a form that opens the search page (search/?q=...).
(function () {
  "use strict";
  var html = document.documentElement;
  var PARAM = "highlight";  // ?highlight=word on a result's address: marked on arrival
  var PAGE_SIZE = 10;
  var SAY = {
    missing: "Search is not available in this copy of the site: its search index was not built.",
    searching: "Searching…"
  };

  // -- Words: a query's words, and whether a word on a page answers one. ------------------
  // A page's word answers a searched one that starts it ("jit" finds "jitted"); on arrival
  // the page marks a word sharing with the searched one its whole length up to 3 letters,
  // and at least half of a longer one ("running" marks "runs").
  function words(text) {
    return text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) || [];
  }
  function answers(term, word) {
    var shared = 0;
    while (shared < term.length && term[shared] === word[shared]) shared++;
    return shared >= Math.min(term.length, Math.max(3, Math.floor(term.length / 2)));
  }
  // -- The engine: every bundle's offline.js (builder/render/search.py makes the bundles),
  // served or not: a page opened from a file may not import a module nor fetch an index,
  // and one engine for both is what makes a search from disk find what it finds served.
  var root = new URL(html.getAttribute("data-root") || "./", document.baseURI);
  var engine = null;
  function load() {
    if (engine) return engine;
    var folders = (html.getAttribute("data-search-bundles") || "search-index/main/").split(" ");
    engine = offline(folders);
    engine.catch(function () { /* said when a search is made */ });
    return engine;
  }
  // -- A page opened from a file may not fetch or import, but it may load a script, so each
  // bundle is its pages as one (offline.js, which adds them to
  // window.coursebuilderSearch: builder/render/offline.py), searched here word by word.
  var OFFLINE = "coursebuilderSearch";
  function offline(folders) {
    return Promise.all(folders.map(function (folder) {
      return new Promise(function (done, failed) {
        var tag = document.createElement("script");
        tag.src = new URL(folder + "offline.js", root).href;
        tag.async = false;  // run in the bundles' order, however they arrive: ties rank alike
        tag.onload = done;
        tag.onerror = function () { failed(new Error(SAY.missing)); };
        document.head.appendChild(tag);
      });
    })).then(function () {
      var pages = [].concat.apply([], window[OFFLINE] || []).map(prepared);
      return { find: function (terms) { return found(pages, terms); } };
    });
  }
  // A page's sections with their words, each word as search compares it.
  function prepared(page, order) {
    return {
      page: page, order: order, title: words(page.title), teaches: words(page.teaches || ""),
      sections: page.sections.map(function (s) {
        return { id: s[0], title: s[1], heading: words(s[1]), text: words(s[2]), shown: s[2] };
      })
    };
  }
  function hits(terms, list) {  // how many words of `list` start with one of `terms`
    return list.reduce(function (n, w) {
      return n + (terms.some(function (t) { return w.lastIndexOf(t, 0) === 0; }) ? 1 : 0);
    }, 0);
  }
  // The pages that hold every word, best first: a page that teaches a searched word before
  // any that does not (lesson.html's `teaches`), then by its title, its headings, then the
  // rest of its text (code and output count as prose).
  function found(pages, terms) {
    var scored = [];
    pages.forEach(function (p) {
      var score = 0;
      var all = terms.every(function (t) {
        var one = [t];
        var n = 100 * hits(one, p.teaches) + 10 * hits(one, p.title) + p.sections.reduce(function (m, s) {
          return m + 5 * hits(one, s.heading) + hits(one, s.text);
        }, 0);
        score += Math.log(1 + n) + (hits(one, p.teaches) ? 100 : 0);
        return n > 0;
      });
      if (all) scored.push({ p: p, score: score });
    });
    scored.sort(function (a, b) { return b.score - a.score || a.p.order - b.p.order; });
    return scored.map(function (s) {
      var data = result(s.p, terms);
      return { data: function () { return Promise.resolve(data); } };
    });
  }
  // What showing a result reads: its address, title, excerpt and sections.
  function result(p, terms) {
    var url = new URL(p.page.url, root).href;
    var subs = p.sections.filter(function (s) {
      return hits(terms, s.heading) + hits(terms, s.text) > 0;
    }).map(function (s) {
      var n = hits(terms, s.heading) + hits(terms, s.text);
      return { url: s.id ? url + "#" + s.id : url, title: s.title || p.page.title,
               excerpt: around(s.shown, terms), locations: new Array(n) };
    });
    return { url: url, meta: { title: p.page.title }, sub_results: subs,
             excerpt: subs.length ? subs[0].excerpt : "" };
  }
  // About 30 words of `text` around its first searched word, those words in <mark>.
  function around(text, terms) {
    var parts = text.split(/\s+/);
    var hit = function (part) { return hits(terms, words(part)) > 0; };
    var first = Math.max(0, parts.findIndex(hit));
    var start = Math.max(0, first - 10);
    return parts.slice(start, start + 30).map(function (part) {
      var safe = part.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
      return hit(part) ? "<mark>" + safe + "</mark>" : safe;
    }).join(" ");
  }
  // Every page that answers the query, best first, with `data()` to load what it shows.
  // `stale()`: a newer search was asked for since, and this one is not made.
  function search(query, stale) {
    var terms = words(query);
    if (!terms.length) return Promise.resolve([]);
    return load().then(function (index) { return stale() ? [] : index.find(terms); });
  }
  // -- Showing results: one group per page, its sections (headings) under it. ---------------
  function marked(url, terms) {  // the address, asking the page to mark the words
    var at = url.indexOf("#");
    var hash = at < 0 ? "" : url.slice(at);
    var path = at < 0 ? url : url.slice(0, at);
    var query = terms.map(function (t) { return PARAM + "=" + encodeURIComponent(t); }).join("&");
    return path + (path.indexOf("?") < 0 ? "?" : "&") + query + hash;
  }
  function excerpt(markup) {  // an excerpt: text and <mark>, nothing else kept
    var span = document.createElement("span");
    span.className = "hit-excerpt";
    var parsed = document.createElement("template");
    parsed.innerHTML = markup || "";
    parsed.content.childNodes.forEach(function (node) {
      var text = document.createTextNode(node.textContent);
      if (node.nodeName !== "MARK") return span.appendChild(text);
      var mark = document.createElement("mark");
      mark.appendChild(text);
      span.appendChild(mark);
    });
    return span;
  }
  function option(id, href, title, text, kind) {
    var link = document.createElement("a");
    link.id = id;
    link.href = href;
    link.className = "hit hit-" + kind;
    link.setAttribute("role", "option");
    link.setAttribute("aria-selected", "false");
    var name = document.createElement("span");
    name.className = "hit-title";
    name.textContent = title;
    link.appendChild(name);
    if (text) link.appendChild(excerpt(text));
    return link;
  }
  // The sections to show: at most 3, those with most hits, in the page's order.
  function sections(data) {
    var subs = (data.sub_results || []).filter(function (s) { return s.url.indexOf("#") >= 0; });
    var best = subs.slice().sort(function (a, b) { return b.locations.length - a.locations.length; })
      .slice(0, 3);
    return subs.filter(function (s) { return best.indexOf(s) >= 0; });
  }
  function group(data, prefix, terms) {
    var box = document.createElement("div");
    box.className = "hit-page-group";
    box.setAttribute("role", "group");
    var title = (data.meta && data.meta.title) || data.url;
    box.setAttribute("aria-label", title);
    var top = (data.sub_results || []).filter(function (s) { return s.url.indexOf("#") < 0; })[0];
    var list = sections(data);
    var text = top ? top.excerpt : list.length ? "" : data.excerpt;
    box.appendChild(option(prefix, marked(data.url, terms), title, text, "page"));
    list.forEach(function (sub, n) {
      box.appendChild(option(prefix + "-" + n, marked(sub.url, terms), sub.title, sub.excerpt, "section"));
    });
    return box;
  }

  // -- A search box: the header's (a panel under it) or the search page's (results below). --
  var boxes = [];
  function SearchBox(form) {
    var input = form.querySelector(".search-input");
    var status = form.querySelector(".search-status");
    var list = form.querySelector(".search-results");
    var panel = form.querySelector(".search-panel");
    var more = form.querySelector(".search-more");
    var inline = !panel;
    var id = input.id;
    var results = [];
    var shown = 0;
    var asked = 0;  // the latest search; an older one that ends later is dropped
    var timer = null;
    var back = null;  // where focus was before a key brought it here
    this.inline = inline;

    input.setAttribute("role", "combobox");
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-controls", list.id);
    input.setAttribute("aria-expanded", "false");
    input.setAttribute("aria-describedby", status.id);

    function options() { return Array.prototype.slice.call(list.querySelectorAll("[role=option]")); }
    function open(yes) {
      if (panel) panel.hidden = !yes;
      input.setAttribute("aria-expanded", String(yes && options().length > 0));
      if (!yes) activate(null);
    }
    function say(text) {
      status.textContent = text;
      status.hidden = !text;
    }
    function activate(item) {
      options().forEach(function (o) { o.setAttribute("aria-selected", String(o === item)); });
      if (item) {
        input.setAttribute("aria-activedescendant", item.id);
        item.scrollIntoView({ block: "nearest" });
      } else input.removeAttribute("aria-activedescendant");
    }
    function active() { return list.querySelector("[aria-selected=true]"); }
    function move(step) {
      var all = options();
      if (!all.length) return;
      var at = all.indexOf(active()) + step;
      activate(all[Math.max(0, Math.min(all.length - 1, at < -1 ? all.length - 1 : at))]);
    }
    function counted(query, count) {
      if (!count) return "No results for “" + query + "”. Check the spelling, or try fewer or shorter words.";
      return count + (count === 1 ? " result" : " results") + " for “" + query + "”";
    }
    function showMore() {  // the next pages of results, each group once its data arrived
      var next = results.slice(shown, shown + PAGE_SIZE);
      var ask = asked;
      if (more) more.hidden = true;  // until these are shown
      shown += next.length;
      return Promise.all(next.map(function (result) { return result.data(); })).then(function (all) {
        if (ask !== asked) return;
        var terms = words(input.value);
        all.forEach(function (data, n) {
          list.appendChild(group(data, id + "-hit-" + (shown - next.length + n), terms));
        });
        list.hidden = !options().length;
        if (more) more.hidden = shown >= results.length;
        if (!inline && shown < results.length) {
          var page = form.action + "?q=" + encodeURIComponent(input.value.trim());
          list.appendChild(option(id + "-all", page, "All " + results.length + " results on the search page", "", "all"));
        }
        open(true);
      });
    }
    function run() {  // the results for what the box holds now
      var query = input.value.trim();
      var ask = ++asked;
      list.textContent = "";
      list.hidden = true;
      shown = 0;
      if (more) more.hidden = true;
      if (inline) history.replaceState(null, "", query ? "?q=" + encodeURIComponent(query) : location.pathname);
      if (!query) { say(""); open(false); return Promise.resolve(); }
      say(SAY.searching);
      open(true);
      return search(query, function () { return ask !== asked; }).then(function (found) {
        if (ask !== asked) return;
        results = found;
        return showMore().then(function () {  // the count once its results are on screen
          if (ask === asked) say(counted(query, found.length));
        });
      }, function (error) {
        if (ask === asked) { say(error.message); open(true); }
      });
    }
    this.run = run;
    this.focus = function (from) { back = from; input.focus(); input.select(); };
    input.addEventListener("focus", function () {
      load();
      if (!inline && input.value.trim() && options().length) open(true);
    });
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(run, 120);
    });
    input.addEventListener("keydown", function (event) {
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        if (panel && panel.hidden && options().length) open(true);
        move(event.key === "ArrowDown" ? 1 : -1);
      } else if (event.key === "Enter" && active()) {
        event.preventDefault();
        location.assign(active().href);
      } else if (event.key === "Escape") {
        event.preventDefault();
        if (!inline) open(false);
        var to = back;
        back = null;
        if (to && to !== document.body && document.contains(to)) to.focus();
        else if (!inline) input.blur();
      }
    });
    form.addEventListener("submit", function (event) {  // Enter with no result chosen
      if (!inline) return;  // the header's: the search page, with every result
      event.preventDefault();
      clearTimeout(timer);
      run();
    });
    form.addEventListener("focusout", function (event) {
      if (!inline && !form.contains(event.relatedTarget)) open(false);
    });
    list.addEventListener("mousemove", function (event) {
      var item = event.target.closest("[role=option]");
      if (item && item !== active()) activate(item);
    });
    if (more) more.addEventListener("click", function () { showMore(); });
    // A click in the panel (a result, its scroll bar) keeps the focus in the box, so the
    // panel stays open until a result is followed.
    if (panel) panel.addEventListener("mousedown", function (event) { event.preventDefault(); });
    if (inline) say("");
  }
  document.querySelectorAll("form.site-search, form.search-page").forEach(function (form) {
    boxes.push(new SearchBox(form));
  });

  // "/" and Ctrl/Cmd-K: the search page's own box there, else the header's.
  function typing(el) {
    return !!el && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName));
  }
  document.addEventListener("keydown", function (event) {
    var slash = event.key === "/" && !event.ctrlKey && !event.metaKey && !event.altKey;
    var k = (event.key === "k" || event.key === "K") && (event.ctrlKey || event.metaKey) && !event.altKey;
    if ((!slash && !k) || typing(document.activeElement) || !boxes.length) return;
    event.preventDefault();
    var box = boxes.filter(function (b) { return b.inline; })[0] || boxes[0];
    box.focus(document.activeElement);
  });

  // The search page: ?q= searches at once (a link, or the header's box without a choice).
  var query = new URLSearchParams(location.search).get("q");
  boxes.forEach(function (box) {
    if (!box.inline) return;
    var input = document.querySelector(".search-page .search-input");
    if (query) { input.value = query; box.run(); }
    input.focus();
  });

  // -- On arrival from a result: the searched words marked in the page's text (never in
  // what search leaves out: heading links, glossary cards, line numbers). A mark only
  // colours the text behind it: the layout and a code block's text stay as they were.
  var SKIP = "[data-pagefind-ignore], .lineno, script, style, mark, textarea";
  function highlight(terms) {
    var scope = document.querySelectorAll("[data-pagefind-body]");
    if (!scope.length) scope = document.querySelectorAll("main");
    scope.forEach(function (body) {
      var walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT, {
        acceptNode: function (node) {
          return node.parentElement.closest(SKIP) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
        }
      });
      var nodes = [];
      while (walker.nextNode()) nodes.push(walker.currentNode);
      nodes.forEach(function (node) { markWords(node, terms); });
    });
  }
  function markWords(node, terms) {
    var text = node.nodeValue, pattern = /[\p{L}\p{N}]+/gu, match, at = 0, parts = [];
    while ((match = pattern.exec(text))) {
      var word = words(match[0])[0] || "";
      if (!terms.some(function (t) { return answers(t, word); })) continue;
      parts.push(text.slice(at, match.index), match[0]);
      at = match.index + match[0].length;
    }
    if (!parts.length) return;
    var out = document.createDocumentFragment();
    parts.forEach(function (part, n) {
      if (n % 2 === 0) { if (part) out.appendChild(document.createTextNode(part)); return; }
      var mark = document.createElement("mark");
      mark.className = "search-hit";
      mark.textContent = part;
      out.appendChild(mark);
    });
    if (at < text.length) out.appendChild(document.createTextNode(text.slice(at)));
    node.parentNode.replaceChild(out, node);
  }
  var wanted = [].concat.apply([], new URLSearchParams(location.search).getAll(PARAM).map(words));
  if (wanted.length) highlight(wanted);
})();
