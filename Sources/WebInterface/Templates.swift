import Mustache

/// The pages' templates (mustache, which escapes every `{{value}}` for HTML; `{{{body}}}` is used only for
/// the output of another template), the style sheet and the one script. Kept in the binary so the process
/// needs no files beside it.
enum Templates {
    static func library() throws -> MustacheLibrary {
        var library = MustacheLibrary()
        for (name, text) in all { try library.register(text, named: name) }
        return library
    }

    static let all: [(String, String)] = [
        ("layout", layout), ("pair", pair), ("now", now), ("now-status", nowStatus), ("library", libraryPage),
        ("grid", grid), ("book", book), ("review", review), ("spine-list", spineList), ("spine-item", spineItem),
        ("spine", spine), ("queue", queue), ("export", export), ("message", message),
    ]

    static let layout = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · SwiftWing</title>
        <link rel="stylesheet" href="/static/app.css">
        <script src="/static/app.js" defer></script>
        </head>
        <body>
        <a class="skip" href="#main">Skip to content</a>
        <header>
        <span class="brand">SWIFTWING</span>
        {{#showNav}}<nav aria-label="Pages"><ul>{{#nav}}<li><a href="{{href}}"{{#current}} aria-current="page"{{/current}}>{{label}}</a></li>{{/nav}}</ul></nav>{{/showNav}}
        </header>
        <main id="main">
        {{{body}}}
        </main>
        </body>
        </html>

        """

    static let message = """
        <h1>{{heading}}</h1>
        <p class="error" role="alert">{{text}}</p>
        {{#link}}<p><a href="{{link}}">{{linkLabel}}</a></p>{{/link}}
        """

    static let pair = """
        <h1>Pair this browser</h1>
        <p>Hold the shutter for 5 seconds (or run <code>sudo -u swiftwing swiftwing web pair</code> on the device): the panel shows a 6-digit code and a QR code. Scan the QR code with a phone's camera to fill the code in here, or type it. A code works 5 minutes, once.</p>
        {{#problem}}<p class="error" role="alert">{{problem}}</p>{{/problem}}
        <form method="post" action="/pair" class="pair">
        <label for="code">Code</label>
        <input id="code" name="code" class="mono code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}" maxlength="6" required{{#code}} value="{{code}}"{{/code}}{{^code}} autofocus{{/code}}>
        <button type="submit"{{#code}} autofocus{{/code}}>Pair</button>
        </form>
        """

    static let now = """
        <h1>Now</h1>
        <div id="now-status" data-events="/events" aria-live="polite">
        {{#status}}{{> now-status}}{{/status}}
        </div>
        {{#shutter}}
        <form method="post" action="/shutter" class="shutter">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" class="primary">Press the shutter</button>
        </form>
        {{/shutter}}
        {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
        {{#problem}}<p class="error" role="alert">{{problem}}</p>{{/problem}}
        """

    static let nowStatus = """
        <p class="state state-{{stateClass}}">{{state}}</p>
        <p class="link">{{connectivity}}{{#countdown}} <span class="mono">{{countdown}}</span>{{/countdown}}</p>
        {{#camera}}<p class="camera">Camera: {{camera}}</p>{{/camera}}
        <dl class="counts">
        <div><dt>On the way</dt><dd class="mono">{{counts.active}}</dd></div>
        <div><dt>Need a person</dt><dd class="mono">{{counts.stuck}}</dd></div>
        <div><dt>Books</dt><dd class="mono">{{counts.books}}</dd></div>
        <div><dt>To review</dt><dd class="mono">{{counts.needsReview}}</dd></div>
        <div><dt>To check</dt><dd class="mono"><a href="/review">{{counts.spinesToCheck}}</a></dd></div>
        </dl>
        <h2>Latest scans</h2>
        <ul class="scans">{{#scans}}<li class="scan-{{stateClass}}"><span class="mono">{{shortID}}</span> <span class="scan-state">{{stateLabel}}</span> <span class="when">{{when}}</span></li>{{/scans}}{{^scans}}<li>No scans yet.</li>{{/scans}}</ul>
        <h2>Latest books</h2>
        <ul class="latest">{{#books}}<li><a href="/books/{{id}}">{{title}}</a>{{#authors}} <span class="authors">{{authors}}</span>{{/authors}}</li>{{/books}}{{^books}}<li>No books yet.</li>{{/books}}</ul>
        """

    static let libraryPage = """
        <h1>Library</h1>
        {{#undo}}
        <form method="post" action="/undo" class="notice" role="status">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="token" value="{{token}}">
        Deleted “{{title}}”. <button type="submit">Undo</button>
        </form>
        {{/undo}}
        <form class="search" action="/library" method="get" role="search">
        <label for="q">Search title, author or ISBN</label>
        <input id="q" name="q" type="search" value="{{query}}" autocomplete="off" data-live="/library/grid">
        <label for="sort">Sort by</label>
        <select id="sort" name="sort">{{#sorts}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/sorts}}</select>
        <button type="submit">Search</button>
        </form>
        <div id="grid" aria-live="polite">
        {{#grid}}{{> grid}}{{/grid}}
        </div>
        """

    static let grid = """
        <p class="summary">{{summary}}</p>
        <ul class="grid">{{#books}}<li class="tile"><a href="/books/{{id}}">{{#spine}}<img src="{{cover}}" alt="" class="spine" loading="lazy">{{/spine}}{{^spine}}{{#cover}}<img src="{{cover}}" alt="" loading="lazy">{{/cover}}{{^cover}}<span class="plain" aria-hidden="true">{{title}}</span>{{/cover}}{{/spine}}<span class="title">{{title}}</span><span class="authors">{{authors}}</span>{{#review}}<span class="badge">Review</span>{{/review}}</a></li>{{/books}}</ul>
        <nav class="pages" aria-label="More books">{{#previous}}<a href="{{previous}}">← Previous</a>{{/previous}} {{#next}}<a href="{{next}}" rel="next">Next →</a>{{/next}}</nav>
        """

    static let book = """
        <article class="book">
        <h1>{{heading}}</h1>
        {{#problem}}<p class="error" role="alert" id="problem">{{problem}}</p>{{/problem}}
        {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
        {{#review}}<p class="badge">Needs review: {{review}}</p>{{/review}}
        <dl class="fields">{{#fields}}<div><dt>{{name}}</dt><dd{{#mono}} class="mono"{{/mono}}>{{value}}</dd></div>{{/fields}}</dl>
        {{#hasAlternatives}}
        <h2 id="wrong-book">Wrong book?</h2>
        <p>The recognizer thought it may also be:</p>
        <form method="post" action="/books/{{id}}/replace" class="candidates" aria-labelledby="wrong-book">
        <input type="hidden" name="csrf" value="{{csrf}}">
        {{#alternatives}}<button type="submit" name="candidate" value="{{number}}" aria-label="{{label}}{{#confidence}}, {{confidence}}{{/confidence}}"><span class="title">{{title}}</span>{{#authors}} <span class="authors">{{authors}}</span>{{/authors}}{{#confidence}} <span class="mono confidence">{{confidence}}</span>{{/confidence}}</button>{{/alternatives}}
        </form>
        <p>None of these: correct it below, or delete it if it is not a book.</p>
        {{/hasAlternatives}}
        <h2>Correct</h2>
        <form method="post" action="/books/{{id}}/edit" class="edit">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="title">Title</label>
        <input id="title" name="title" value="{{form.title}}">
        <label for="authors">Authors, one a line</label>
        <textarea id="authors" name="authors" rows="3">{{form.authors}}</textarea>
        <label for="isbn">ISBN</label>
        <input id="isbn" name="isbn" class="mono" value="{{form.isbn}}" inputmode="numeric" autocomplete="off"{{#problem}} aria-describedby="problem"{{/problem}}>
        <button type="submit" class="primary">Save</button>
        </form>
        <div class="actions">
        {{#needsReview}}
        <form method="post" action="/books/{{id}}/approve"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">Approve as it is</button></form>
        {{/needsReview}}
        <form method="post" action="/books/{{id}}/delete"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger">Delete</button></form>
        </div>
        <h2>Raw JSON</h2>
        <pre class="mono raw">{{raw}}</pre>
        </article>
        """

    static let review = """
        <h1>Review</h1>
        {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
        {{#problem}}<p class="error" role="alert">{{problem}}</p>{{/problem}}
        <h2 id="spines-heading">Spines to check</h2>
        {{#spines}}{{> spine-list}}{{/spines}}
        <h2 id="books-heading">Books to review</h2>
        <p>Books below 80 % confidence, or flagged: approve them as they are, or open one to correct it.{{#booksSummary}} {{booksSummary}}{{/booksSummary}}</p>
        <ul class="rows" aria-labelledby="books-heading">{{#books}}<li><a href="/books/{{id}}">{{title}}</a> <span class="authors">{{authors}}</span> <span class="mono">{{isbn}}</span> <span class="reason">{{reason}}</span>
        <form method="post" action="/books/{{id}}/approve"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="back" value="review"><button type="submit">Approve</button></form></li>{{/books}}{{^books}}<li>No book needs review.</li>{{/books}}</ul>
        <nav class="pages" aria-label="More books to review">{{#previousBooks}}<a href="{{previousBooks}}">← Previous</a>{{/previousBooks}} {{#nextBooks}}<a href="{{nextBooks}}">Next →</a>{{/nextBooks}}</nav>
        """

    /// The spines read but not identified: each one tap from its book.
    static let spineList = """
        <p class="summary">{{summary}}</p>
        <ul class="spines" aria-labelledby="spines-heading">{{#spines}}<li>{{> spine-item}}</li>{{/spines}}</ul>
        <nav class="pages" aria-label="More spines">{{#previous}}<a href="{{previous}}">← Previous</a>{{/previous}} {{#next}}<a href="{{next}}" rel="next">Next →</a>{{/next}}</nav>
        """

    /// One spine: its picture, the text read, its candidates as buttons, "none of these" and "not a book".
    static let spineItem = """
        <section class="spine-item" aria-labelledby="spine-{{id}}-text">
        {{#picture}}<img src="{{picture}}" alt="{{pictureAlt}}" class="spine-picture">{{/picture}}{{^picture}}<p class="no-picture">No picture was kept of this spine.</p>{{/picture}}
        <div class="spine-body">
        <p class="read">Read: <q id="spine-{{id}}-text" class="mono">{{text}}</q></p>
        <form method="post" action="/spines/{{id}}/pick" class="candidates">
        <input type="hidden" name="csrf" value="{{csrf}}">{{#page}}<input type="hidden" name="page" value="{{page}}">{{/page}}
        {{#candidates}}<button type="submit" name="candidate" value="{{number}}" aria-label="{{label}}{{#confidence}}, {{confidence}}{{/confidence}}"><span class="title">{{title}}</span>{{#authors}} <span class="authors">{{authors}}</span>{{/authors}}{{#confidence}} <span class="mono confidence">{{confidence}}</span>{{/confidence}}</button>{{/candidates}}
        </form>
        {{#noCandidates}}<p>No book in the catalogues looked like it.</p>{{/noCandidates}}
        <div class="actions">
        {{^onOwnPage}}<a href="/spines/{{id}}" class="button">None of these…</a>{{/onOwnPage}}
        <form method="post" action="/spines/{{id}}/dismiss"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger" aria-label="Spine {{id}} is not a book">Not a book</button></form>
        </div>
        </div>
        </section>
        """

    /// One spine on its own: every candidate, and the book typed in.
    static let spine = """
        <h1>{{item.heading}}</h1>
        {{#problem}}<p class="error" role="alert" id="problem">{{problem}}</p>{{/problem}}
        {{#resolved}}<p class="notice" role="status">This spine was {{resolved}} already.</p>{{/resolved}}
        {{#item}}{{> spine-item}}{{/item}}
        <h2 id="search-heading">Search the catalogues</h2>
        {{#canSearch}}
        <form method="get" action="/spines/{{item.id}}" role="search" class="search">
        <label for="q">Title or author</label>
        <input id="q" name="q" type="search" value="{{query}}" autocomplete="off">
        <button type="submit">Search</button>
        </form>
        {{#searchProblem}}<p class="error" role="alert">{{searchProblem}}</p>{{/searchProblem}}
        {{#noResults}}<p role="status">No book in the catalogues matches “{{query}}”.</p>{{/noResults}}
        {{#searched}}<ul class="results" aria-labelledby="search-heading">{{#results}}<li><form method="post" action="/spines/{{spineID}}/pick" class="candidates"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="title" value="{{title}}"><input type="hidden" name="authors" value="{{authorLines}}"><input type="hidden" name="isbn" value="{{isbn}}"><button type="submit" aria-label="{{label}}{{#confidence}}, {{confidence}}{{/confidence}}"><span class="title">{{title}}</span>{{#authors}} <span class="authors">{{authors}}</span>{{/authors}}{{#confidence}} <span class="mono confidence">{{confidence}}</span>{{/confidence}}{{#source}} <span class="authors">{{source}}</span>{{/source}}</button></form></li>{{/results}}</ul>{{/searched}}
        {{/canSearch}}
        {{^canSearch}}<p>The search needs the recognizer on this device (the backend at 127.0.0.1): type the book below.</p>{{/canSearch}}
        <h2>Type the book</h2>
        <form method="post" action="/spines/{{item.id}}/pick" class="edit">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="title">Title</label>
        <input id="title" name="title" value="{{typedTitle}}" required{{#problem}} aria-describedby="problem"{{/problem}}>
        <label for="authors">Authors, one a line</label>
        <textarea id="authors" name="authors" rows="2"></textarea>
        <label for="isbn">ISBN (if you have it)</label>
        <input id="isbn" name="isbn" class="mono" inputmode="numeric" autocomplete="off">
        <button type="submit" class="primary">Add this book</button>
        </form>
        <p><a href="/review">Back to the review</a></p>
        """

    static let queue = """
        <h1>Queue</h1>
        {{#notice}}<p class="notice" role="status">{{notice}}</p>{{/notice}}
        {{#problem}}<p class="error" role="alert">{{problem}}</p>{{/problem}}
        {{#anyFailed}}<form method="post" action="/queue/retry-all"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">Retry every failed scan</button></form>{{/anyFailed}}
        <ul class="rows">{{#scans}}<li class="scan-{{stateClass}}">{{#thumbnail}}<img src="{{thumbnail}}" alt="Scan {{shortID}}" width="80">{{/thumbnail}}
        <span class="mono">{{shortID}}</span> <span class="scan-state">{{stateLabel}}</span> <span class="when">{{when}}</span>{{#reason}} <span class="reason">{{reason}}</span>{{/reason}}
        {{#actionable}}<span class="actions"><form method="post" action="/queue/{{id}}/retry"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit">Retry</button></form>
        <form method="post" action="/queue/{{id}}/discard"><input type="hidden" name="csrf" value="{{csrf}}"><button type="submit" class="danger">Discard</button></form></span>{{/actionable}}</li>{{/scans}}{{^scans}}<li>No scans.</li>{{/scans}}</ul>
        """

    static let export = """
        <h1>Export</h1>
        <p>The library as the USB stick export writes it ({{books}} books):</p>
        <ul class="rows">
        <li><a href="/export/swiftwing.csv" download>SwiftWing CSV</a>: every column, for spreadsheets.</li>
        <li><a href="/export/goodreads.csv" download>Goodreads CSV</a>: imports into Goodreads and the services that read its files.</li>
        </ul>
        """

    static let styleSheet = """
        @font-face { font-family: "JetBrains Mono"; src: local("JetBrains Mono"), url("/static/mono.ttf") format("truetype");
          font-display: swap; }
        :root { color-scheme: dark; --orange: #FF3B30; --grey: #9a9a9a; }
        * { box-sizing: border-box; }
        body { margin: 0; background: #000; color: #fff; font: 16px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
        .mono, code, pre, input.mono { font-family: "JetBrains Mono", ui-monospace, "DejaVu Sans Mono", monospace; }
        a { color: #fff; text-decoration-color: var(--orange); text-underline-offset: 3px; }
        a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible {
          outline: 3px solid var(--orange); outline-offset: 2px; }
        .skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: #000; padding: 8px; }
        header { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 20px; padding: 12px 16px;
          border-bottom: 2px solid var(--orange); }
        .brand { font-weight: 800; letter-spacing: .12em; color: var(--orange); }
        nav ul { display: flex; flex-wrap: wrap; gap: 4px 16px; list-style: none; margin: 0; padding: 0; }
        nav a { text-decoration: none; padding: 6px 0; display: inline-block; }
        nav a[aria-current=page] { border-bottom: 2px solid var(--orange); }
        main { padding: 16px; max-width: 1200px; margin: 0 auto; }
        h1 { font-size: 1.6rem; margin: .2em 0 .6em; } h2 { font-size: 1.1rem; margin-top: 1.6em; color: var(--grey);
          text-transform: uppercase; letter-spacing: .08em; }
        label { display: block; margin: 10px 0 4px; color: var(--grey); }
        input, select, textarea { width: 100%; max-width: 32rem; background: #000; color: #fff; border: 1px solid #fff;
          padding: 10px; font-size: 1rem; border-radius: 0; }
        button { background: #000; color: #fff; border: 1px solid #fff; padding: 10px 16px; font-size: 1rem;
          margin-top: 10px; cursor: pointer; min-height: 44px; }
        button.primary { background: var(--orange); border-color: var(--orange); color: #000; font-weight: 700; }
        button.danger { border-color: var(--orange); color: var(--orange); }
        .error { border-left: 4px solid var(--orange); padding: 8px 12px; color: #fff; background: #1a0000; }
        .notice { border-left: 4px solid #fff; padding: 8px 12px; }
        .notice button { margin: 0 0 0 8px; }
        .badge { display: inline-block; background: var(--orange); color: #000; font-weight: 700; padding: 2px 8px;
          font-size: .8rem; text-transform: uppercase; letter-spacing: .06em; }
        .search { display: grid; gap: 0 12px; grid-template-columns: 1fr; max-width: 40rem; }
        .grid { list-style: none; padding: 0; display: grid; gap: 16px;
          grid-template-columns: repeat(auto-fill, minmax(150px, 1fr)); }
        .tile a { display: flex; flex-direction: column; gap: 4px; text-decoration: none; }
        .tile img, .tile .plain { width: 100%; aspect-ratio: 2 / 3; object-fit: cover; background: #111;
          border: 1px solid #333; }
        .tile img.spine { object-fit: contain; }
        .tile .plain { display: flex; align-items: flex-end; padding: 10px; font-weight: 700; overflow: hidden;
          border-top: 6px solid var(--orange); }
        .tile .title { font-weight: 600; } .authors, .when, .reason { color: var(--grey); }
        .summary { color: var(--grey); }
        .pages { display: flex; justify-content: space-between; margin: 16px 0; }
        .fields { display: grid; grid-template-columns: 1fr; gap: 6px; }
        .fields div { display: grid; grid-template-columns: 9rem 1fr; gap: 12px; border-bottom: 1px solid #222; padding: 4px 0; }
        .fields dt { color: var(--grey); } .fields dd { margin: 0; overflow-wrap: anywhere; }
        .raw { white-space: pre-wrap; overflow-wrap: anywhere; background: #0d0d0d; padding: 12px; border: 1px solid #333; }
        .actions { display: flex; flex-wrap: wrap; gap: 12px; }
        .rows { list-style: none; padding: 0; } .rows li { border-bottom: 1px solid #222; padding: 10px 0; }
        .rows form { display: inline-block; margin-right: 8px; } .rows img { float: left; margin-right: 12px; }
        .rows li::after { content: ""; display: block; clear: both; }
        .spines { list-style: none; padding: 0; }
        .spine-item { display: flex; gap: 16px; align-items: flex-start; border-bottom: 1px solid #222; padding: 12px 0; }
        .spine-picture { max-height: 60vh; max-width: 40%; width: auto; border: 1px solid #333; background: #111; }
        .spine-body { flex: 1; min-width: 0; } .read q { overflow-wrap: anywhere; }
        .candidates { display: flex; flex-direction: column; gap: 8px; }
        .candidates button { text-align: left; margin: 0; width: 100%; max-width: 32rem; }
        .candidates .authors, .candidates .confidence { color: #c8c8c8; } .candidates .title { display: block; }
        a.button { display: inline-block; border: 1px solid #fff; padding: 10px 16px; margin-top: 10px; min-height: 44px;
          text-decoration: none; }
        .actions form { display: inline-block; }
        .results { list-style: none; padding: 0; display: flex; flex-direction: column; gap: 8px; }
        .state { font-size: 2rem; font-weight: 800; letter-spacing: .06em; margin: 0; }
        .state-problem, .scan-failed .scan-state, .scan-needs_attention .scan-state { color: var(--orange); }
        .counts { display: grid; grid-template-columns: repeat(auto-fit, minmax(140px, 1fr)); gap: 12px; }
        .counts div { border: 1px solid #333; padding: 10px; } .counts dt { color: var(--grey); }
        .counts dd { margin: 0; font-size: 1.8rem; }
        .scans, .latest { list-style: none; padding: 0; } .scans li, .latest li { padding: 4px 0; }
        .code { font-size: 2rem; letter-spacing: .3em; max-width: 12rem; }
        @media (min-width: 800px) {
          .search { grid-template-columns: 2fr 1fr auto; align-items: end; }
          .search label[for=sort] { grid-column: 2; grid-row: 1; } .search select { grid-column: 2; grid-row: 2; }
          .search label[for=q] { grid-column: 1; grid-row: 1; } .search input { grid-column: 1; grid-row: 2; }
          .search button { grid-column: 3; grid-row: 2; margin: 0; }
        }

        """

    /// Search as you type and the live status; the pages work without it.
    static let script = """
        "use strict";
        (function () {
          var status = document.getElementById("now-status");
          if (status && window.EventSource) {
            var source = new EventSource(status.getAttribute("data-events"));
            source.addEventListener("status", function (event) { status.innerHTML = event.data; });
          }
          // A cover that does not load (no network, a dead link) becomes the plain tile with the title.
          document.addEventListener("error", function (event) {
            var image = event.target;
            if (image.tagName !== "IMG" || !image.parentNode.matches(".tile a")) { return; }
            var plain = document.createElement("span");
            plain.className = "plain";
            plain.setAttribute("aria-hidden", "true");
            plain.textContent = image.parentNode.querySelector(".title").textContent;
            image.replaceWith(plain);
          }, true);
          var search = document.querySelector("input[data-live]");
          if (search) {
            var grid = document.getElementById("grid"), form = search.form, timer = null, serial = 0, sorted = false;
            var run = function () {
              var fields = new URLSearchParams(new FormData(form));
              // Unless a person picked an order, a search lists the best matches first.
              if (!sorted && fields.get("q")) { fields.delete("sort"); }
              var query = fields.toString(), mine = ++serial;
              fetch(search.getAttribute("data-live") + "?" + query, { credentials: "same-origin" })
                .then(function (answer) { return answer.ok ? answer.text() : null; })
                .then(function (html) {
                  if (html === null || mine !== serial) { return; }
                  grid.innerHTML = html;
                  history.replaceState(null, "", "/library?" + query);
                });
            };
            search.addEventListener("input", function () { clearTimeout(timer); timer = setTimeout(run, 150); });
            var sort = document.getElementById("sort");
            if (sort) { sort.addEventListener("change", function () { sorted = true; run(); }); }
          }
        })();

        """
}
