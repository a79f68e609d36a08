/**
 * `vexil validate --format sarif`: the located problems as a SARIF 2.1.0 log, in the subset GitHub
 * code scanning accepts. One run; `tool.driver.rules` is the whole rule catalogue
 * (src/state/rules.ts: id, meaning, usual fix, default level), each problem one result with its
 * rule id and index, its level (error, warning; info is `note`), its message (and hint) and its
 * physical location: the file as the other formats print it (relative to the folder vexil was run
 * from, which is the repository root in CI) and its line and column (UTF-16 code units, as
 * editors count). Code scanning refuses a result without a location and places one only by its
 * `startLine`: a problem about a whole file points at its line 1, column 1, and one about no file
 * (the state as a whole) at the folder checked (`.` when there is none).
 */
import type { Problem } from '../model/problem.js';
import { RULES, type RuleSeverity } from '../state/rules.js';
import { VERSION } from '../version.js';

const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';

type Level = 'error' | 'warning' | 'note';

function levelOf(severity: RuleSeverity): Level {
  return severity === 'info' ? 'note' : severity;
}

/** A URI reference for a `/`-separated relative path (each segment percent-encoded where needed). */
function uriOf(path: string): string {
  return path.split('/').map((s) => encodeURIComponent(s)).join('/');
}

export function formatSarif(problems: readonly Problem[]): string {
  const ids = Object.keys(RULES) as Array<keyof typeof RULES>;
  const indexOf = new Map<string, number>(ids.map((id, i) => [id, i]));
  const rules = ids.map((id) => {
    const r = RULES[id];
    return {
      id,
      name: id,
      shortDescription: { text: r.meaning },
      fullDescription: { text: r.meaning },
      help: { text: r.hint },
      defaultConfiguration: { level: levelOf(r.severity) },
    };
  });
  const results = problems.map((p) => {
    const message = p.hint !== undefined && p.hint !== '' ? `${p.message}\nhint: ${p.hint}` : p.message;
    const ruleIndex = indexOf.get(p.rule);
    const location = {
      physicalLocation: {
        artifactLocation: { uri: p.file === '' ? '.' : uriOf(p.file), uriBaseId: '%SRCROOT%' },
        region: { startLine: Math.max(1, p.line), startColumn: p.line > 0 ? Math.max(1, p.column) : 1 },
      },
    };
    return {
      ruleId: p.rule,
      ...(ruleIndex !== undefined ? { ruleIndex } : {}),
      level: levelOf(p.severity),
      message: { text: message },
      locations: [location],
    };
  });
  const log = {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: { driver: { name: 'vexil', semanticVersion: VERSION, rules } },
        columnKind: 'utf16CodeUnits',
        results,
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}
