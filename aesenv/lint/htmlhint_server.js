// Long-lived HTMLHint worker: one JSON request per stdin line, one JSON answer per stdout line,
// so linting a page costs a function call, not a Node start-up.
// argv[2]: JSON rule set. Request: {"id", "html"}. Answer: {"id", "messages"} or {"id", "error"}.
"use strict";
const readline = require("readline");
const { HTMLHint } = require("htmlhint");
const VERSION = require("htmlhint/package.json").version;

// HTMLHint's own meta-charset-require only checks presence; the execution agent wants UTF-8.
HTMLHint.addRule({
  id: "meta-charset-utf-8",
  description: "<meta charset> must declare utf-8.",
  init(parser, reporter) {
    parser.addListener("tagstart", (event) => {
      if (event.tagName.toLowerCase() !== "meta") return;
      const attrs = parser.getMapAttrs(event.attrs);
      if (attrs.charset !== undefined && attrs.charset.trim().toLowerCase().replace("_", "-") !== "utf-8") {
        reporter.error(`<meta charset="${attrs.charset}"> must be utf-8.`, event.line, event.col, this, event.raw);
      }
    });
  },
});

const rules = JSON.parse(process.argv[2] || "{}");
const MAX_MESSAGES = 200;
const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    process.stdout.write(JSON.stringify({ id: null, error: "bad request: " + e.message }) + "\n");
    return;
  }
  try {
    const messages = HTMLHint.verify(req.html, rules).slice(0, MAX_MESSAGES).map((m) => ({
      rule: m.rule.id, type: m.type, message: m.message, line: m.line, col: m.col,
      evidence: (m.evidence || "").slice(0, 160),
    }));
    process.stdout.write(JSON.stringify({ id: req.id, messages, version: VERSION }) + "\n");
  } catch (e) {
    process.stdout.write(JSON.stringify({ id: req.id, error: String(e && e.message || e) }) + "\n");
  }
});
