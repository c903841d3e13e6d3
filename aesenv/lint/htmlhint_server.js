// Long-lived HTMLHint worker: one JSON request per stdin line, one JSON answer per stdout line,
// so linting a page costs a function call, not a Node start-up.
//
// argv[2]: JSON rule set (ours, never the answer's).
// First line out: {"ready": true, "version"} once the self-check below passed, or {"ready": false, "error"}.
// Request: {"id", "html"}, or {"id", "html", "rules"} to lint with another rule set of ours (the
// execution channel's rules for the DOM the page's scripts left). Answer: {"id", "messages",
// "version"}; {"id", "failure"} when linting this page threw (the page's failure); {"id", "error"}
// when the request itself was unreadable (ours).
//
// The answer must not configure its own lint. HTMLHint.verify() honours configuration written in the
// page (a leading `<!-- htmlhint rule:value,... -->` that is merged INTO the rule set object it was
// given, and `<!-- htmlhint-disable[-next-line] [rules] -->` / `<!-- htmlhint-enable -->` anywhere),
// so we never call it: lint() below is verify()'s core -- a parser, a reporter that disables nothing,
// our rules initialised from a fresh copy of the rule set -- with the page passed through untouched,
// so every comment is just a comment and line/col numbers are the page's own.
"use strict";
const readline = require("readline");
const { HTMLHint, HTMLParser, Reporter } = require("htmlhint");
const VERSION = require("htmlhint/package.json").version;

// HTMLHint's own meta-charset-require only checks presence; the execution agent wants UTF-8.
HTMLHint.addRule({
  id: "meta-charset-utf-8",
  description: "<meta charset> must declare utf-8.",
  init(parser, reporter) {
    parser.addListener("tagstart", (event) => {
      if (event.tagName.toLowerCase() !== "meta") return;
      const attrs = parser.getMapAttrs(event.attrs);
      if (Object.prototype.hasOwnProperty.call(attrs, "charset") &&
          String(attrs.charset).trim().toLowerCase().replace("_", "-") !== "utf-8") {
        reporter.error(`<meta charset="${attrs.charset}"> must be utf-8.`, event.line, event.col, this, event.raw);
      }
    });
  },
});

// HTMLHint 1.9.2's id-unique counts ids in a plain object, so an id named like an Object.prototype
// member ("constructor", "toString", "__proto__", ...) is never counted and may repeat freely. Same
// rule id, description and message, counted in a Map. With the option "per-tree" (the rule set for
// serialised DOM), ids count per tree as the DOM scopes them: the content of each <template>,
// where the serialiser writes every shadow root, is a tree of its own, whose ids may repeat
// those outside it (each instance of a web component has its own `#label`).
const upstreamIdUnique = HTMLHint.rules["id-unique"];
HTMLHint.addRule({
  id: "id-unique",
  description: upstreamIdUnique ? upstreamIdUnique.description : "The value of id attributes must be unique.",
  init(parser, reporter, options) {
    const perTree = options === "per-tree";
    const trees = [new Map()];
    parser.addListener("tagstart", (event) => {
      const tag = event.tagName.toLowerCase();
      const seen = trees[trees.length - 1];
      const col = event.col + event.tagName.length + 1;
      for (const attr of event.attrs) {
        if (attr.name.toLowerCase() !== "id") continue;
        const id = attr.value;
        if (id) {
          const count = (seen.get(id) || 0) + 1;
          seen.set(id, count);
          if (count > 1) reporter.error(`The id value [ ${id} ] must be unique.`, event.line, col + attr.index, this, attr.raw);
        }
        break;
      }
      if (perTree && tag === "template" && !event.close) trees.push(new Map());
    });
    if (perTree) {
      parser.addListener("tagend", (event) => {
        if (event.tagName.toLowerCase() === "template" && trees.length > 1) trees.pop();
      });
    }
  },
});

const RULES_JSON = process.argv[2] || "{}";
const MAX_MESSAGES = 200;
const MAX_TEXT = 300; // a message quotes tag and attribute names, which the page can make huge
const MAX_EVIDENCE = 160;

function lint(html, rulesJson = RULES_JSON) {
  const ruleset = JSON.parse(rulesJson); // a fresh copy per page: nothing one page does reaches the next
  const parser = new HTMLParser();
  const reporter = new Reporter(html, ruleset, Object.create(null)); // no line is ever disabled
  for (const id of Object.keys(ruleset)) {
    const rule = HTMLHint.rules[id];
    if (rule !== undefined && ruleset[id] !== false) rule.init(parser, reporter, ruleset[id]);
  }
  parser.parse(html);
  return reporter.messages;
}

function clip(text, n) {
  text = String(text === undefined || text === null ? "" : text);
  return text.length > n ? text.slice(0, n) + "…" : text;
}

// A message's evidence is its whole line: on a line longer than the clip (serialised DOM is a few
// very long lines), the part from a little before the message's column.
function around(line, col, n) {
  line = String(line === undefined || line === null ? "" : line);
  const start = line.length > n ? Math.max(0, Math.min(col - 1 - 20, line.length - n)) : 0;
  return start > 0 ? "…" + clip(line.slice(start), n - 1) : clip(line, n);
}

// Refuse to serve if this HTMLHint ever honours an inline config comment through lint() (an upgrade
// that moved comment handling into the parser or reporter): every form must leave the errors standing.
function selfCheck() {
  const rules = JSON.stringify({ "tag-pair": true, "id-unique": true });
  const probe = [
    "<!-- htmlhint tag-pair:false,title-require:false -->",
    "<!-- htmlhint-disable -->",
    "<!-- htmlhint-disable-next-line -->",
    "<p><span></p>",
    "<!-- HTMLHint-Disable tag-pair -->",
    "<p><span></p>",
  ].join("\n");
  const seen = lint(probe, rules).filter((m) => m.rule.id === "tag-pair").length;
  if (seen < 2) throw new Error(`HTMLHint ${VERSION} honoured an inline config comment in the self-check`);
  const twice = lint("<!-- htmlhint id-unique:false -->\n<p id=\"a\"></p><p id=\"a\"></p>", rules);
  if (!twice.some((m) => m.rule.id === "id-unique")) throw new Error("inline config changed the rule set");
}

try {
  selfCheck();
} catch (e) {
  process.stdout.write(JSON.stringify({ ready: false, error: String(e && e.message || e) }) + "\n");
  process.exit(3);
}
process.stdout.write(JSON.stringify({ ready: true, version: VERSION }) + "\n");

const rl = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
rl.on("line", (line) => {
  let req;
  try {
    req = JSON.parse(line);
    if (typeof req.html !== "string") throw new Error("html must be a string");
    if (req.rules !== undefined && (req.rules === null || typeof req.rules !== "object" || Array.isArray(req.rules))) {
      throw new Error("rules must be an object");
    }
  } catch (e) {
    process.stdout.write(JSON.stringify({ id: req && req.id !== undefined ? req.id : null, error: "bad request: " + e.message }) + "\n");
    return;
  }
  let messages;
  try {
    messages = lint(req.html, req.rules === undefined ? RULES_JSON : JSON.stringify(req.rules));
  } catch (e) {
    // Our rules are fixed and the rule set is fresh, so what throws here is this page.
    const failure = clip(e && e.name ? `${e.name}: ${e.message}` : e, MAX_TEXT);
    process.stdout.write(JSON.stringify({ id: req.id, failure }) + "\n");
    return;
  }
  const out = messages.slice(0, MAX_MESSAGES).map((m) => ({
    rule: m.rule.id, type: m.type, message: clip(m.message, MAX_TEXT), line: m.line, col: m.col,
    evidence: around(m.evidence, m.col, MAX_EVIDENCE),
  }));
  process.stdout.write(JSON.stringify({ id: req.id, messages: out, version: VERSION, total: messages.length }) + "\n");
});
