import HPSyncCrypto

/// The stylesheet and the script, compiled in: no build step, no files to install. Served under
/// a name that carries their digest, so the browser may cache them for good.
enum Assets {
    static let css = """
        :root { --accent: #0a63c9; --line: #d8dce2; --muted: #5b6470; --bad: #b3261e; font-family: system-ui, sans-serif; }
        * { box-sizing: border-box; }
        body { margin: 0; color: #1d232b; background: #f5f6f8; }
        header { background: #1d232b; padding: .6rem 1rem; }
        header nav { display: flex; gap: 1.2rem; flex-wrap: wrap; align-items: center; }
        header a { color: #fff; text-decoration: none; font-weight: 600; }
        header .brand { font-size: 1.1rem; margin-right: auto; }
        main { padding: 1rem; max-width: 1200px; margin: 0 auto; }
        h1 { font-size: 1.4rem; margin: .2rem 0 1rem; }
        a { color: var(--accent); }
        .totals { font-size: 1.05rem; margin: .4rem 0 .8rem; }
        .totals strong { font-size: 1.2rem; }
        .toolbar { display: flex; gap: .5rem; flex-wrap: wrap; align-items: center; margin-bottom: .6rem; }
        .toolbar input[type=search] { flex: 1 1 14rem; }
        input, select, button, .button { font: inherit; padding: .45rem .6rem; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
        button, .button { cursor: pointer; color: var(--accent); text-decoration: none; display: inline-block; }
        button.primary { background: var(--accent); color: #fff; border-color: var(--accent); }
        button.danger { background: var(--bad); color: #fff; border-color: var(--bad); }
        .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(170px, 1fr)); gap: .8rem; }
        .card { position: relative; background: #fff; border: 1px solid var(--line); border-radius: 10px; overflow: hidden; }
        .card:has(input:checked), tr:has(input:checked) { outline: 3px solid var(--accent); background: #e8f1fc; }
        .card a { color: inherit; text-decoration: none; display: block; }
        .card img, .card .nophoto { width: 100%; aspect-ratio: 4 / 3; object-fit: cover; display: block; background: #e9ecf0; }
        .card .nophoto { display: flex; }
        .nophoto { display: flex; align-items: center; justify-content: center; color: var(--muted); font-size: .9rem; }
        .card .meta { padding: .5rem .6rem; display: grid; gap: .1rem; }
        .card .name { font-weight: 600; overflow-wrap: anywhere; }
        .card .serial, .muted { color: var(--muted); font-size: .85rem; }
        .pick { position: absolute; top: .4rem; left: .4rem; background: rgba(255,255,255,.9); border-radius: 6px; padding: .1rem .3rem; }
        .pick input { width: 1.2rem; height: 1.2rem; margin: 0; vertical-align: middle; }
        body.selecting .card { cursor: pointer; }
        table { border-collapse: collapse; width: 100%; background: #fff; }
        th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: middle; }
        td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
        td img.thumb { width: 56px; height: 42px; object-fit: cover; border-radius: 4px; display: block; }
        .pages { display: flex; gap: 1rem; justify-content: center; margin: 1rem 0; align-items: center; }
        .detail { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 1.2rem; }
        .detail img.photo { width: 100%; max-height: 75vh; object-fit: contain; background: #e9ecf0; border-radius: 10px; }
        .detail .nophoto { aspect-ratio: 4 / 3; border-radius: 10px; background: #e9ecf0; }
        form.fields { display: grid; gap: .6rem; background: #fff; padding: 1rem; border: 1px solid var(--line); border-radius: 10px; }
        form.fields label { display: grid; gap: .2rem; font-weight: 600; }
        dl.facts { display: grid; grid-template-columns: auto 1fr; gap: .2rem .8rem; font-size: .9rem; }
        dl.facts dd { margin: 0; overflow-wrap: anywhere; }
        .panel { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 1rem; margin: 0 0 1rem; }
        .notice { background: #e8f6ec; border: 1px solid #9cd3ac; padding: .7rem 1rem; border-radius: 8px; margin-bottom: 1rem; }
        .error { background: #fdecea; border: 1px solid #f1a7a1; padding: .7rem 1rem; border-radius: 8px; }
        .inline { display: inline; }
        .sides { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 1rem; }
        .side img.photo { width: 100%; max-height: 260px; object-fit: contain; }
        .side h3 { margin: 0 0 .3rem; font-size: .95rem; } .side .value { font-size: 1.2rem; font-weight: 600; }
        .side.kept { border-left: 4px solid #2e7d32; padding-left: .6rem; } .side.losing { border-left: 4px solid #c62828; padding-left: .6rem; }
        @media (max-width: 700px) { .detail, .sides { grid-template-columns: 1fr; } }
        .report td img { width: 1.6in; max-height: 1.2in; object-fit: contain; }
        .report tfoot td { font-weight: 700; }
        @media print {
          header, .noprint { display: none !important; }
          body { background: #fff; } main { max-width: none; padding: 0; }
          .report tr { break-inside: avoid; }
          .report thead { display: table-header-group; }
          .report tfoot { display: table-row-group; }
          a { color: inherit; text-decoration: none; }
        }
        """

    /// Progressive enhancement only: every page works without it. "Select" turns taps on cards
    /// into selection (ColorCollection's editing mode) and keeps the count on the button.
    static let javascript = """
        "use strict";
        document.addEventListener("DOMContentLoaded", () => {
          const toggle = document.getElementById("select-mode");
          const remove = document.getElementById("remove-selected");
          const boxes = () => Array.from(document.querySelectorAll("input[name=key][form=selection]"));
          const update = () => {
            const n = boxes().filter(b => b.checked).length;
            if (remove) { remove.textContent = n ? `Remove selected (${n})` : "Remove selected"; remove.disabled = n === 0; }
          };
          boxes().forEach(b => b.addEventListener("change", update));
          if (toggle) {
            toggle.hidden = false;
            toggle.addEventListener("click", () => {
              const on = document.body.classList.toggle("selecting");
              toggle.textContent = on ? "Done" : "Select";
              if (!on) { boxes().forEach(b => { b.checked = false; }); update(); }
            });
          }
          document.querySelectorAll(".card").forEach(card => card.addEventListener("click", event => {
            if (!document.body.classList.contains("selecting") || event.target.matches("input")) { return; }
            event.preventDefault();
            const box = card.querySelector("input[name=key]");
            if (box) { box.checked = !box.checked; update(); }
          }));
          update();
          document.querySelectorAll("[data-confirm]").forEach(form => form.addEventListener("submit", event => {
            if (!window.confirm(form.dataset.confirm)) { event.preventDefault(); }
          }));
          document.querySelectorAll("[data-print]").forEach(b => b.addEventListener("click", () => window.print()));
        });
        """

    static let cssPath = "/static/app-\(version(css)).css"
    static let javascriptPath = "/static/app-\(version(javascript)).js"

    private static func version(_ text: String) -> String {
        String(SHA256.hash(Array(text.utf8)).hex.prefix(12))
    }
}
