/** The report page's style sheet (inline: the page is one file and loads nothing). */
export const REPORT_CSS = `
:root{--ok:#2e8540;--failed:#c62828;--timeout:#ef6c00;--oom:#8e24aa;--retried:#f2a900;--fallback:#1e88e5;--interrupted:#6d6d6d;--kept:#9ccc9c;--planned:#5c6bc0;--bg:#fff;--fg:#1d2330;--muted:#5f6b7a;--line:#dde2ea;--row:#f7f9fc;font-family:"DejaVu Sans",system-ui,sans-serif;font-size:13px;color:var(--fg);background:var(--bg)}
body{margin:0 16px 40px}
h1{font-size:19px;margin:14px 0 4px}h2{font-size:15px;margin:22px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
h3{margin:0 0 6px;font-size:14px;word-break:break-all}
.sub{color:var(--muted);margin:0 0 10px}
.facts-grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(260px,1fr));gap:4px 18px;margin:8px 0}
.fact{display:flex;gap:8px;min-width:0}.fact .k{color:var(--muted);flex:0 0 110px}.fact .v{min-width:0;overflow-wrap:anywhere}
.counts{display:flex;flex-wrap:wrap;gap:6px;margin:8px 0}
.chip{border-radius:10px;padding:2px 9px;background:#eef1f6;white-space:nowrap}.chip b{font-weight:600}
.chip.o-ok{background:#dff1e3}.chip.o-failed{background:#fbe0e0}.chip.o-oom{background:#f1e1f7}.chip.o-timeout{background:#fdebd8}.chip.o-retried{background:#fff2cc}.chip.o-fallback{background:#dcebfb}.chip.o-kept{background:#ecf6ec}.chip.o-interrupted{background:#e8e8e8}
.makespan{margin:6px 0;font-size:14px}.makespan .big{font-weight:600}
.notes{background:#fff8e1;border:1px solid #f3dc8b;padding:6px 10px;border-radius:4px;margin:8px 0}.notes li{margin:2px 0}
.gpus{margin:4px 0 0;padding-left:18px}.gpus li{margin:1px 0}
.uuid{font-family:"DejaVu Sans Mono",monospace;font-size:11px;color:var(--muted)}
code,pre{font-family:"DejaVu Sans Mono",monospace;font-size:11.5px}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:6px 0;color:var(--muted);align-items:center}
.legend .sw{display:inline-block;width:18px;height:10px;border-radius:2px;vertical-align:-1px;margin-right:4px}
.controls{display:flex;gap:8px;align-items:center;margin:4px 0 6px}.controls button{font:inherit;padding:1px 8px}
#timeline{display:flex;border:1px solid var(--line);border-radius:4px;position:relative}
#tl-labels{flex:0 0 auto;width:170px;border-right:1px solid var(--line);background:#fbfcfe}
.lbl{font-size:11px;line-height:18px;padding:0 6px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;box-sizing:border-box}
.lbl.first{border-top:1px solid #c9d1dd}.lbl.queue{color:#8a6d00;font-size:10px;line-height:16px}.lbl.host{color:#245c9e}
#tl-scroll{flex:1 1 auto;overflow-x:auto;overflow-y:hidden}
.tl-svg,.mem-svg{display:block}
.tl-svg .row{fill:#fff}.tl-svg .row.odd{fill:var(--row)}.tl-svg .row.queue{fill:#fffbea}.tl-svg .sep{stroke:#c9d1dd}
.axis text,.break-label{font-size:10px;fill:var(--muted)}.axis line{stroke:#b9c2cf}.axis .tick{stroke:#edf0f4}
.break{stroke:#d08b00;stroke-dasharray:3 3;stroke-width:1.5}
.hold{fill:#8fa3bf}.hold.excl{fill:url(#hatch-x);opacity:.75}
.planned{fill:none;stroke:var(--planned);stroke-width:1.2;stroke-dasharray:3 2;opacity:.9}
.no-plan .planned-layer{display:none}
.wait{fill:url(#hatch)}
.bar{stroke:rgba(0,0,0,.25);stroke-width:.5;cursor:pointer}
.bar.o-ok{fill:var(--ok)}.bar.o-failed{fill:var(--failed)}.bar.o-timeout{fill:var(--timeout)}.bar.o-oom{fill:var(--oom)}
.bar.o-retried{fill:var(--retried)}.bar.o-fallback{fill:var(--fallback)}.bar.o-interrupted{fill:var(--interrupted)}.bar.o-kept{fill:var(--kept)}
.bar.o-planned.k-gpu{fill:#7986cb}.bar.o-planned.k-cpu{fill:#9fb3c8}
.host-fill{pointer-events:none}
.bar.sel{stroke:#000;stroke-width:2}
.load{fill:rgba(0,0,0,.35);pointer-events:none}.reuse{fill:#fff;stroke:#000;stroke-width:1;pointer-events:none}
.skip{fill:#fff;stroke:#777;stroke-width:1}.skip.c-completed{fill:var(--kept)}
.queue{fill:#f2c94c;opacity:.85}
#tip{position:fixed;z-index:10;max-width:420px;background:#1d2330;color:#fff;padding:7px 9px;border-radius:5px;font-size:12px;pointer-events:none;box-shadow:0 2px 8px rgba(0,0,0,.25)}
#tip .kv{display:flex;gap:8px}#tip .k{color:#aab4c3;flex:0 0 70px}#tip .tt-title{font-weight:600;word-break:break-all}#tip .tt-hint{color:#aab4c3;font-size:11px;margin-top:3px}#tip .uuid{color:#aab4c3}
#details{position:fixed;right:12px;top:12px;bottom:12px;width:min(460px,45vw);overflow:auto;background:#fff;border:1px solid #c9d1dd;border-radius:6px;box-shadow:0 4px 18px rgba(0,0,0,.18);padding:12px 14px;z-index:9}
#details .close{float:right;font:inherit;border:0;background:#eef1f6;border-radius:4px;cursor:pointer}
#details .kv{display:flex;gap:10px;margin:3px 0}#details .k{color:var(--muted);flex:0 0 92px}#details .v{min-width:0;overflow-wrap:anywhere}
#details .attempt,#details .facts{border-top:1px solid var(--line);margin-top:8px;padding-top:6px}
.tail{background:#1d2330;color:#e8ecf2;padding:6px 8px;border-radius:4px;white-space:pre-wrap;overflow-wrap:anywhere;max-height:220px;overflow:auto}
.badge{display:inline-block;border-radius:10px;padding:1px 8px;color:#fff;background:var(--muted);font-size:12px}
.badge.o-ok{background:var(--ok)}.badge.o-failed{background:var(--failed)}.badge.o-timeout{background:var(--timeout)}.badge.o-oom{background:var(--oom)}.badge.o-retried{background:var(--retried);color:#222}.badge.o-fallback{background:var(--fallback)}.badge.o-kept{background:var(--kept);color:#222}.badge.o-planned{background:var(--planned)}
.attempts{margin:6px 0;padding-left:20px}.attempts li.cur{font-weight:600}
.mem-row{display:flex;border:1px solid var(--line);border-top:0}.mem-row:first-child{border-top:1px solid var(--line)}
.mem-name{flex:0 0 auto;font-size:11px;padding:4px 6px;box-sizing:border-box;border-right:1px solid var(--line);background:#fbfcfe}
.mem-plot{flex:1 1 auto;overflow:hidden}
.mem-bg{fill:#fff}.mem-total{stroke:#c9d1dd;stroke-dasharray:2 3}.mem-budget{stroke:#c62828;stroke-dasharray:6 3;stroke-width:1.3}
.mem-series.used{fill:none;stroke:#1e5fb3;stroke-width:1.6}.mem-series.reserved{fill:rgba(92,107,192,.35);stroke:#5c6bc0;stroke-width:1.2}
.mem-dot{fill:#1e5fb3}.mem-label{font-size:10px;fill:var(--muted)}.mem-label.budget{fill:#c62828}
table.steps{border-collapse:collapse;width:100%;font-size:12px;table-layout:fixed}table.steps.placement{table-layout:auto}
table.steps th{position:sticky;top:0;background:#f0f3f8;text-align:left;border-bottom:1px solid #c9d1dd;padding:3px 6px;white-space:nowrap}
table.steps th button{font:inherit;font-weight:600;border:0;background:none;cursor:pointer;padding:0}table.steps th button.on{color:#1e5fb3}
table.steps td{border-bottom:1px solid #eef1f5;padding:0 6px;height:20px;line-height:20px;max-width:340px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
table.steps tr.spacer td{padding:0;border:0;height:auto}
table.steps td.n{text-align:right;font-variant-numeric:tabular-nums}
table.steps tr{cursor:pointer}table.steps tr:hover td{background:#f5f8fd}table.steps tr.sel td{background:#e3edfb}
.dot{display:inline-block;width:9px;height:9px;border-radius:50%;margin-right:5px;background:var(--muted)}
.dot.o-ok{background:var(--ok)}.dot.o-failed{background:var(--failed)}.dot.o-timeout{background:var(--timeout)}.dot.o-oom{background:var(--oom)}.dot.o-retried{background:var(--retried)}.dot.o-fallback{background:var(--fallback)}.dot.o-kept{background:var(--kept)}.dot.o-skipped{background:#fff;border:1px solid #888}
.table-wrap{max-height:70vh;overflow:auto;border:1px solid var(--line);border-radius:4px}
table.placement td{white-space:normal}
.none{color:var(--muted)}
footer{margin-top:24px;color:var(--muted);font-size:11px}
`;
