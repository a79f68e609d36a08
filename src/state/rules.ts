/**
 * The catalogue of problem rule ids: every `rule` a located problem can carry (state files, the
 * index file, flag test files, what a source refuses to hand out), each with its severity, one line
 * of meaning and the usual hint. CI users match on these ids, so they are stable and listed once:
 * code that reports a problem names its rule as a `RuleId` (a typo is a type error),
 * `docs/errors.md` is generated from this table (scripts/errors-doc.ts), and
 * test/state/rules.test.ts fails when code emits an id missing here.
 *
 * Bounds: data only, no I/O. The problem a rule produces (message, position, the hint fitted to
 * the case) is written where the rule is checked; the hint here is the general advice.
 */

/** Severity of a rule (the same words as `Problem.severity`). */
export type RuleSeverity = 'error' | 'warning' | 'info';

export interface RuleEntry {
  readonly severity: RuleSeverity;
  /** One line: what the rule finds. */
  readonly meaning: string;
  /** The usual fix (a problem may carry a hint fitted to its case instead). */
  readonly hint: string;
}

/** Every rule id, grouped by what it checks; the order is the order of docs/errors.md. */
export const RULES = {
  // Syntax and encoding of state files.
  'yaml.syntax': { severity: 'error', meaning: 'a YAML state file (or the index file) cannot be parsed', hint: 'fix the syntax at the position given; `vexil validate` lists every syntax error of the file' },
  'yaml.duplicate-key': { severity: 'error', meaning: 'a YAML mapping has the same key twice', hint: 'remove or rename one of the duplicated keys' },
  'yaml.alias-expansion': { severity: 'error', meaning: 'YAML aliases make a file (or the state) stand for more than 1,000,000 values, or an alias refers to a node that contains it', hint: 'write the values out, or nest fewer aliases' },
  'json.syntax': { severity: 'error', meaning: 'a JSON state file cannot be parsed (the first error is reported)', hint: 'fix the syntax at the position given' },
  'file.encoding': { severity: 'error', meaning: 'a state file is not valid UTF-8', hint: 'save the file as UTF-8' },
  'file.extension': { severity: 'error', meaning: 'an included file has an extension other than .yml, .yaml or .json (a file without extension is read as JSON)', hint: 'rename the file, or change the index globs to leave it out' },

  // Files a source refuses to hand out.
  'file.too-large': { severity: 'error', meaning: 'a state file is over `storage.max_file_size` (for git: also when stored as a delta of a larger object)', hint: 'split the file, or raise storage.max_file_size' },
  'state.too-large': { severity: 'error', meaning: "a revision's state files together are over `storage.max_state_size`", hint: 'serve less state from one reference, or raise storage.max_state_size' },
  'file.symlink-outside-root': { severity: 'error', meaning: 'a symbolic link leaves the state folder (local), or is a link at all (git): it is not followed', hint: 'put the file itself in the state folder or commit it instead of a link' },
  'file.unreadable': { severity: 'error', meaning: 'a state file could not be read (I/O error, or a symbolic link to a missing file)', hint: 'check the file and its permissions; fix or remove a broken link' },
  'bundle.config-too-large': { severity: 'error', meaning: "an OCI bundle's manifest declares a config blob over the size limit: it is not downloaded", hint: 'push a bundle built by `vexil bundle build` or `flipt bundle build`' },

  // The index file (`.flipt.yml`).
  'index.encoding': { severity: 'error', meaning: 'the index file is not valid UTF-8', hint: 'save the index file as UTF-8' },
  'index.syntax': { severity: 'error', meaning: 'the index file cannot be parsed as YAML', hint: 'fix the syntax at the position given' },
  'index.empty': { severity: 'error', meaning: 'the index file is empty', hint: 'add `include:` with the globs of the state files, or delete the index file to use the default discovery' },
  'index.type': { severity: 'error', meaning: 'the index file, its `version`, or an `include`/`exclude` list or item has the wrong type', hint: 'write `version` as a string and `include:`/`exclude:` as lists of glob strings' },
  'index.glob.invalid': { severity: 'error', meaning: 'a glob of `include` or `exclude` is not a valid pattern', hint: 'fix the pattern (escape a literal [ or { with \\)' },
  'index.unknown-key': { severity: 'warning', meaning: 'the index file has a key other than `version`, `include`, `exclude` and `tests`; it is ignored', hint: 'remove the key' },
  'index.include.missing': { severity: 'warning', meaning: 'the index file has no `include`: no state file is read', hint: 'add `include:` with globs such as "**/*.features.yml"' },

  // Structure: schemas/features.schema.json.
  'schema.type': { severity: 'error', meaning: 'a field (or a document) has the wrong type', hint: 'write the type named in the message (constraint values and versions are quoted strings)' },
  'schema.required': { severity: 'error', meaning: 'a required field is missing', hint: 'add the field named in the message' },
  'schema.additional-property': { severity: 'error', meaning: 'a field the format does not have (often a typo)', hint: 'fix the name (the message suggests the closest allowed field) or remove it' },
  'schema.enum': { severity: 'error', meaning: 'a field has a value outside its allowed set (a flag type, an operator, a match type...)', hint: 'use one of the values listed in the message' },
  'schema.pattern': { severity: 'error', meaning: 'a key uses characters other than letters, digits, `-`, `_` and `,`, or a value is empty or spans lines', hint: 'write a valid key, or a non-empty single-line value' },
  'schema.min-length': { severity: 'error', meaning: 'a field that must not be empty is empty', hint: 'write a non-empty value' },
  'schema.range': { severity: 'error', meaning: 'a number is outside its allowed range', hint: 'use a number in the range given in the message' },
  'schema.exclusive': { severity: 'error', meaning: 'an object has two fields of which only one may be given (e.g. `segment.key` and `segment.keys`)', hint: 'keep only one of them' },
  'schema.one-of': { severity: 'error', meaning: 'a value matches more than one of the forms it may take', hint: 'write the value in one form only' },
  'schema.invalid': { severity: 'error', meaning: 'a value breaks a rule of the schema that has no rule id of its own here', hint: 'fix the field named in the message' },
  'distribution.rollout.range': { severity: 'error', meaning: "a distribution's `rollout` is not between 0 and 100", hint: 'use a percentage from 0 to 100' },
  'rollout.threshold.range': { severity: 'error', meaning: "a threshold rollout's `percentage` is not between 0 and 100", hint: 'use a percentage from 0 to 100' },

  // Documents and namespaces.
  'version.unsupported': { severity: 'error', meaning: "a field needs a later document `version` than the document's (e.g. `rollouts` needs 1.1, `metadata` 1.3)", hint: 'raise `version` at the top of the document, or remove the field' },
  'namespace.key.missing': { severity: 'warning', meaning: 'the namespace object has no `key`: the document goes to namespace `default`', hint: 'add `key:` to the namespace (or write the namespace as a plain key)' },
  'namespace.redefined': { severity: 'warning', meaning: 'a namespace gets a name or description that another document already gave it; these are ignored', hint: 'give the name and description in one document only' },

  // Keys that must be unique.
  'segment.duplicate': { severity: 'error', meaning: 'a segment key is defined twice in one namespace', hint: 'segment keys are unique per namespace: rename or remove one of them' },
  'flag.duplicate': { severity: 'error', meaning: 'a flag key is defined twice in one namespace', hint: 'flag keys are unique per namespace: rename or remove one of them' },
  'variant.duplicate': { severity: 'error', meaning: 'a variant key is defined twice in one flag', hint: 'variant keys are unique per flag: rename or remove one of them' },

  // Flags, variants, rules, distributions and rollouts.
  'flag.default-variant.multiple': { severity: 'error', meaning: 'a flag marks more than one variant as default', hint: 'keep `default: true` on one variant only' },
  'flag.variants-on-boolean': { severity: 'warning', meaning: 'a boolean flag has variants, which evaluation ignores', hint: 'remove `variants` or make it a VARIANT_FLAG_TYPE flag' },
  'flag.rules-on-boolean': { severity: 'warning', meaning: 'a boolean flag has rules, which evaluation ignores (boolean flags use rollouts)', hint: 'move the logic into `rollouts`, or remove `rules`' },
  'flag.rollouts-on-variant': { severity: 'error', meaning: 'a variant flag has rollouts, which apply only to boolean flags', hint: 'set `type: BOOLEAN_FLAG_TYPE` or use `rules` with distributions' },
  'variant.attachment.invalid': { severity: 'error', meaning: "a variant's attachment cannot be encoded as JSON (.nan, .inf, extreme nesting)", hint: 'use plain JSON values' },
  'rule.rank.ignored': { severity: 'warning', meaning: "a rule has `rank`, which is ignored: a rule's rank is its position in `rules`", hint: 'remove `rank` and order the rules instead' },
  'rule.distributions.sum': { severity: 'error', meaning: "a rule's distributions add up to more than 100%", hint: 'lower the rollouts so that they sum to at most 100' },
  'distribution.variant.unknown': { severity: 'error', meaning: 'a distribution names a variant the flag does not have', hint: "use one of the flag's variants, or declare the variant under the flag's `variants`" },
  'rule.segment.unknown': { severity: 'error', meaning: 'a rule references a segment not defined in its namespace (in any file)', hint: 'define the segment in the namespace or fix the key' },
  'rollout.segment.unknown': { severity: 'error', meaning: 'a segment rollout references a segment not defined in its namespace (in any file)', hint: 'define the segment in the namespace or fix the key' },
  'rule.segment.empty': { severity: 'warning', meaning: 'a rule lists no segments: with OR it never matches, with AND it matches every entity', hint: 'list at least one segment key' },
  'rollout.segment.empty': { severity: 'warning', meaning: 'a segment rollout lists no segments: with OR it never matches, with AND it matches every entity', hint: 'list at least one segment key' },

  // Constraints.
  'constraint.operator.invalid': { severity: 'error', meaning: "a constraint's operator is not valid for its comparison type", hint: 'use one of the operators listed in the message' },
  'constraint.operator.le': { severity: 'warning', meaning: 'a number or date-time constraint uses `le`, which Flipt v1 accepts but never matches', hint: 'use lt or lte' },
  'constraint.value.number': { severity: 'error', meaning: 'a number comparison has no value or a value that is not a number', hint: 'write a number as a string, e.g. value: "42"' },
  'constraint.value.datetime': { severity: 'error', meaning: 'a date-time comparison has no value or a value that is not a date-time', hint: 'write an RFC 3339 date-time such as "2025-01-31T12:00:00Z" or a date such as "2025-01-31"' },
  'constraint.value.array': { severity: 'error', meaning: 'an `isoneof`/`isnotoneof` value is not a JSON array of numbers or strings (as the type requires)', hint: 'write a JSON array in a string, e.g. value: "[1, 2.5]"' },
  'constraint.value.boolean': { severity: 'warning', meaning: 'a boolean constraint has a value, which is ignored (the operator decides)', hint: 'remove `value`' },

  // Semantic checks (`vexil validate`): valid state that does something nobody meant (src/state/checks/).
  // `constraint.operator.le` above belongs to this list too.
  'flag.rollouts.no-effect': { severity: 'warning', meaning: "a boolean flag's rollouts cannot change its outcome: every rollout that can decide answers the flag's `enabled` value, which is also what entities no rollout matches get", hint: 'set `enabled` to the opposite of the rollouts\' value (the fall-through), or remove the rollouts' },
  'rule.unreachable': { severity: 'warning', meaning: "a variant flag's rule never decides: an earlier rule matches every entity (no constraints, or the same or a wider segment set), or its own segments match no entity", hint: 'move the rule before the one that shadows it, narrow that one, or remove the rule' },
  'rollout.unreachable': { severity: 'warning', meaning: "a boolean flag's rollout never decides: an earlier rollout matches every entity (no constraints, a 100% threshold, a wider segment set or threshold), its segments match no entity, its threshold is 0%, or it has neither segment nor threshold", hint: 'move the rollout before the one that shadows it, narrow that one, or remove the rollout' },
  'rule.distributions.incomplete': { severity: 'warning', meaning: "a rule's distributions cover less than 100% (shares count in truncated tenths of a percent): the rest of the entities it matches get no variant and do not fall through to the next rule", hint: 'make the distributions add up to 100 with at most one decimal each, or add a distribution for the rest' },
  'segment.unmatchable': { severity: 'warning', meaning: 'a segment matches no entity: its ALL constraints contradict each other on one property (two different `eq`, an empty number or date-time range, `isoneof` disjoint from `eq`...), or none of its ANY constraints can hold', hint: 'fix the contradicting constraints (or use ANY_MATCH_TYPE if any one of them should do)' },
  'segment.unused': { severity: 'warning', meaning: 'a segment is used by no rule or rollout of any flag in its namespace', hint: 'remove the segment, or reference it where it was meant to be used' },
  'variant.unserved': { severity: 'warning', meaning: 'a variant of a flag with rules is never served: it is not the default variant and no rule that can decide gives it a share over 0%', hint: 'give the variant a share in a rule, make it the default, or remove it' },
  'flag.disabled.rules': { severity: 'info', meaning: 'a disabled variant flag has rules that would decide once it is enabled (while disabled every entity gets FLAG_DISABLED and the default variant)', hint: 'enable the flag when its rules should apply, or remove the rules' },
  'constraint.time.decided': { severity: 'warning', meaning: 'a date-time constraint on a property that carries the request time (`now`, `current_time`) is already decided by today\'s date: always true since a past instant, or never true again', hint: 'remove the constraint (or what it gates): the date has passed' },

  // Flag test files (`vexil test`).
  'flag-test.syntax': { severity: 'error', meaning: 'a flag test file cannot be parsed as YAML', hint: 'fix the syntax at the position given' },
  'flag-test.empty': { severity: 'error', meaning: 'a flag test file is empty', hint: 'add a `tests:` list of cases' },
  'flag-test.required': { severity: 'error', meaning: 'a test file or case is missing a required key (`tests`, `flag`, `entity`, `expect`)', hint: 'add the key named in the message' },
  'flag-test.unknown-key': { severity: 'error', meaning: 'a test file, case or expectation has a key it does not have', hint: 'use only the keys listed in the message' },
  'flag-test.enum': { severity: 'error', meaning: 'an expected `reason` is not one of MATCH, DEFAULT, FLAG_DISABLED, UNKNOWN (or their long forms)', hint: 'use one of the reasons listed in the message' },
  'flag-test.empty-expect': { severity: 'error', meaning: 'a case has an empty `expect`: nothing would be checked', hint: 'give at least one of variant, match, enabled, reason, segments, attachment' },
  'flag-test.expect-conflict': { severity: 'error', meaning: 'an expectation mixes `enabled` (boolean flags) with `variant`, `match` or `attachment` (variant flags)', hint: 'keep the fields of the flag type' },
  'flag-test.duplicate': { severity: 'error', meaning: 'an expectation lists a segment twice', hint: 'list each segment once' },
  'flag-test.type': { severity: 'error', meaning: 'a key of a test file or case has the wrong type', hint: 'write the type named in the message' },
  'flag-test.unreadable': { severity: 'error', meaning: 'a flag test file could not be read', hint: 'check the path and its permissions' },

  // Lifecycle of flags (`metadata.owner`, `metadata.expires`, `metadata.lifecycle`): src/state/checks/lifecycle.ts, `vexil stale`.
  'flag.expired': { severity: 'warning', meaning: 'a flag with `lifecycle: temporary` in its metadata is past its `expires` date', hint: 'remove the flag (and its uses in the code), or move `expires` to a later date' },
  'flag.expires.invalid': { severity: 'warning', meaning: "a flag's `metadata.expires` is not a date (YYYY-MM-DD) or an RFC 3339 date-time, so its expiry is never checked", hint: 'write the date as YYYY-MM-DD, e.g. expires: "2026-12-31"' },

  // The policy file (`.vexil/policy.yml`, `--policy FILE`): src/state/policy/, schemas/policy.schema.json.
  'policy.invalid': { severity: 'error', meaning: 'the policy file has a key it does not have, a value of the wrong type or out of range, or more than one document', hint: 'fix the key or value named in the message (schemas/policy.schema.json)' },
  'policy.rule.unknown': { severity: 'error', meaning: '`rules` in the policy file names a rule id that is not in this catalogue', hint: 'use a rule id of this list, or remove the line' },
  'policy.pattern.unsafe': { severity: 'error', meaning: 'a pattern of the policy file is outside the linear-time subset (a back-reference, lookahead or lookbehind), too long, or not a valid pattern', hint: 'rewrite the pattern without back-references or lookaround' },
  'policy.metadata.required': { severity: 'error', meaning: "a flag's `metadata` lacks a key the policy file requires (`metadata.required`)", hint: 'add the key to the flag\'s metadata (metadata needs document version 1.3)' },
  'policy.metadata.pattern': { severity: 'error', meaning: "a value of a flag's `metadata` does not match the policy file's pattern for its key (`metadata.patterns`)", hint: 'change the value to match the pattern given in the message' },
  'policy.key.pattern': { severity: 'error', meaning: "a flag or segment key does not match the policy file's key pattern (`keys.flag`, `keys.segment`)", hint: 'rename the key to match the pattern given in the message (and update its uses)' },

  // Guards on the change between a base and a head state (`guards` of the policy file): src/diff/guards.ts,
  // `vexil validate --base`, `vexil diff --policy`, `GET /api/v1/diff?policy=true`.
  'guard.max-rollout-change': { severity: 'error', meaning: "a change moves a rule's distribution or a threshold rollout's percentage by more percentage points than `guards.max_rollout_change` (an added rule or threshold rollout counts from 0, a removed one to 0)", hint: 'make the change in smaller steps (one pull request per step), or raise guards.max_rollout_change in the base branch\'s policy first' },
  'guard.protected': { severity: 'error', meaning: 'a change deletes or disables a flag that `guards.protected` protects, or deletes its namespace', hint: 'keep the flag (and keep it enabled); to retire it, first remove it from guards.protected in the base branch\'s policy' },
  'guard.max-impact-share': { severity: 'error', meaning: "a change alters one flag's outcome for a larger share of the impact preview's sample entities than `guards.max_impact_share`", hint: 'roll the change out in smaller steps, or raise guards.max_impact_share in the base branch\'s policy first' },
  'guard.impact.unmeasured': { severity: 'info', meaning: '`guards.max_impact_share` is not measured in full: no impact sample was taken, flags lie beyond the impact preview\'s limits, or the sample has no flag test contexts (every entity has an empty context, so rules behind constraints are not reached)', hint: 'add flag test files whose contexts reach the rules (they become the sample), or pass a sample with --contexts' },

  // Faults of vexil itself.
  'internal.error': { severity: 'error', meaning: 'loading failed on a bug of vexil, not on the state', hint: 'please report this with the state files that trigger it' },
} as const satisfies Record<string, RuleEntry>;

/** A rule id of the catalogue. */
export type RuleId = keyof typeof RULES;

/** Whether `id` is a catalogued rule id. */
export function isRuleId(id: string): id is RuleId {
  return Object.hasOwn(RULES, id);
}
