// npm run render:comment [-- FILE.md ... | --scenario NAME|all] [--out DIR] [--screen HEIGHT]
// Renders a pull-request comment the way a reviewer sees it: Markdown through GitHub's own
// renderer (cmark-gfm, Debian package cmark-gfm 0.29.0.gfm.6, with GitHub's extensions: table,
// strikethrough, autolink, tagfilter), in a column of GitHub's PR-comment content width (830 px)
// with GitHub's font stack, then headless Chromium (Debian `chromium`, emoji from
// `fonts-noto-color-emoji`) measures the page and takes two screenshots: the first screen
// (`<name>.screen.png`, 830 × --screen px) and the whole comment (`<name>.png`). Prints each
// comment's height in px and its length in characters. `--scenario` plans the pull requests of
// test/support/pr-scenarios.ts (fixture stacks) in-process and renders their comments.
// Not part of npm test (it needs Chromium); a proof tool, like npm run bench.
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { runCli } from "./planner/cli";
import { ROOT } from "./planner";

/** GitHub's PR comment body width at the default desktop layout (the timeline column's comment body). */
export const GITHUB_COMMENT_WIDTH = 830;
const EXTENSIONS = ["table", "strikethrough", "autolink", "tagfilter"];

/** Markdown → HTML with GitHub's cmark-gfm and the extensions github.com enables. */
export function renderGfm(markdown: string): string {
  return execFileSync("cmark-gfm", ["--unsafe", "--github-pre-lang", ...EXTENSIONS.flatMap((e) => ["-e", e])], { input: markdown, encoding: "utf8" });
}

const CSS = `
body { margin: 0; background: #fff; }
.markdown-body { box-sizing: border-box; width: ${GITHUB_COMMENT_WIDTH}px; padding: 16px; color: #1f2328;
  font: 14px/1.5 -apple-system, BlinkMacSystemFont, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif, "Apple Color Emoji", "Segoe UI Emoji", "Noto Color Emoji";
  word-wrap: break-word; }
.markdown-body h2 { font-size: 1.5em; border-bottom: 1px solid #d1d9e0; padding-bottom: .3em; margin: 24px 0 16px; }
.markdown-body h3 { font-size: 1.25em; margin: 24px 0 16px; }
.markdown-body p, .markdown-body ul, .markdown-body table, .markdown-body pre, .markdown-body details { margin: 0 0 16px; }
.markdown-body table { display: block; width: max-content; max-width: 100%; overflow: auto; border-spacing: 0; border-collapse: collapse; }
.markdown-body td, .markdown-body th { padding: 6px 13px; border: 1px solid #d1d9e0; }
.markdown-body tr:nth-child(2n) { background: #f6f8fa; }
.markdown-body code { font: 85% ui-monospace, SFMono-Regular, "SF Mono", Menlo, Consolas, "Liberation Mono", monospace; background: rgba(129,139,152,.12); padding: .2em .4em; border-radius: 6px; }
.markdown-body pre { background: #f6f8fa; padding: 16px; overflow: auto; border-radius: 6px; font-size: 85%; line-height: 1.45; }
.markdown-body pre code { background: none; padding: 0; font-size: 100%; }
.markdown-body sub { font-size: 75%; }
`;

export function commentPage(html: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><style>${CSS}</style></head><body><div class="markdown-body">${html}</div></body></html>`;
}

function chromium(args: string[]): string {
  return execFileSync("chromium", ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1", ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
}

/** The rendered page's height in px (a script writes it into the DOM that Chromium dumps). */
function pageHeight(file: string): number {
  const probe = file.replace(/\.html$/, ".probe.html");
  fs.writeFileSync(
    probe,
    fs.readFileSync(file, "utf8").replace("</body>", `<script>document.title = "H=" + document.documentElement.scrollHeight;</script></body>`),
  );
  const dom = chromium([`--window-size=${GITHUB_COMMENT_WIDTH},800`, "--virtual-time-budget=2000", "--dump-dom", `file://${probe}`]);
  fs.rmSync(probe);
  return Number(/<title>H=(\d+)<\/title>/.exec(dom)?.[1] ?? NaN);
}

export function renderComment(name: string, markdown: string, outDir: string, screen: number): { height: number; chars: number; files: string[] } {
  fs.mkdirSync(outDir, { recursive: true });
  const html = path.join(outDir, `${name}.html`);
  fs.writeFileSync(path.join(outDir, `${name}.md`), markdown);
  fs.writeFileSync(html, commentPage(renderGfm(markdown)));
  const height = pageHeight(html);
  const first = path.join(outDir, `${name}.screen.png`);
  const whole = path.join(outDir, `${name}.png`);
  chromium([`--window-size=${GITHUB_COMMENT_WIDTH},${screen}`, `--screenshot=${first}`, `file://${html}`]);
  chromium([`--window-size=${GITHUB_COMMENT_WIDTH},${Math.min(height, 16000)}`, `--screenshot=${whole}`, `file://${html}`]);
  return { height, chars: markdown.length, files: [html, first, whole] };
}

if (require.main === module)
  runCli(async (argv) => {
    const { values: args, positionals } = parseArgs({
      args: argv,
      options: { scenario: { type: "string" }, out: { type: "string" }, screen: { type: "string" } },
      allowPositionals: true,
    });
    const outDir = path.resolve(typeof args.out === "string" ? args.out : path.join(ROOT, "out", "comment"));
    const screen = Number(args.screen ?? 1000);
    const inputs: { name: string; markdown: () => Promise<string> }[] = [];
    if (typeof args.scenario === "string") {
      /* eslint-disable @typescript-eslint/no-require-imports -- the fixture scenarios and the comment, only for --scenario */
      const { SCENARIOS, scenarioPlans } = require("../test/support/pr-scenarios") as typeof import("../test/support/pr-scenarios");
      const { planMarkdown } = require("./planner/markdown") as typeof import("./planner/markdown");
      /* eslint-enable @typescript-eslint/no-require-imports */
      for (const s of SCENARIOS.filter((x) => args.scenario === "all" || x.name === args.scenario))
        inputs.push({
          name: s.name,
          markdown: async () => {
            const p = await scenarioPlans(s);
            const resources = new Map([...p.heads].map(([k, h]) => [k, h.resources] as const));
            return planMarkdown(p.reports, p.diffs, "main", { commit: "0123456789abcdef0123456789abcdef01234567", resources });
          },
        });
    }
    for (const f of positionals) inputs.push({ name: path.basename(f).replace(/\.md$/, ""), markdown: () => Promise.resolve(fs.readFileSync(f, "utf8")) });
    if (inputs.length === 0) {
      process.stdout.write("usage: npm run render:comment -- FILE.md ... | --scenario NAME|all [--out DIR] [--screen HEIGHT]\n");
      return 2;
    }
    for (const i of inputs) {
      const r = renderComment(i.name, await i.markdown(), outDir, screen);
      process.stdout.write(`${i.name}: ${r.height} px high, ${r.chars} characters → ${r.files.join(", ")}\n`);
    }
    return 0;
  }, ROOT);
