/**
 * Constraints in words, the one wording every view uses (`plan is one of [enterprise, pro]`,
 * `age ≥ 18`, `entity id starts with "emp-"`), following the operators Flipt v1 evaluates
 * (../shared/reference/flipt-semantics.md §2.5–§2.6): the UI's segment pages, the evaluation
 * trace (explain-words.ts: the CLI's `--explain` and the UI console), and the semantic diff's
 * changes (src/diff/describe.ts: `vexil diff`, the UI's diff page). Pure text, no DOM.
 */

/** The fields of a constraint the text needs (the API's constraint shape has more). */
export interface ConstraintLike {
  type: string;
  property: string;
  operator: string;
  value: string;
}

const NUMBER_SIGNS: Record<string, string> = { eq: '=', neq: '≠', lt: '<', lte: '≤', gt: '>', gte: '≥' };
const DATETIME_WORDS: Record<string, string> = {
  eq: 'is at',
  neq: 'is not at',
  lt: 'is before',
  lte: 'is at or before',
  gt: 'is after',
  gte: 'is at or after',
};

/** A string as it reads in a sentence: quoted, so spaces and empty strings stay visible. */
function quoted(s: string): string {
  return JSON.stringify(s);
}

/** An item of a one-of list: bare when nothing could be misread, quoted otherwise. */
function listItem(s: string): string {
  return /^[^\s,[\]"]+$/.test(s) ? s : quoted(s);
}

/**
 * The items of an isoneof/isnotoneof list as they read (bare, or quoted when they could be
 * misread), from the JSON array text the constraint holds; undefined when the text is not an array
 * of the type's items (Flipt then matches nothing, for both operators).
 */
function oneOfItems(value: string, numbers: boolean): string[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed)) return undefined;
  const items: string[] = [];
  for (const item of parsed) {
    if (numbers ? typeof item !== 'number' : typeof item !== 'string') return undefined;
    items.push(numbers ? String(item) : listItem(item as string));
  }
  return items;
}

/** The `[a, b]` of isoneof/isnotoneof; undefined when the value is not a list of the type's items. */
export function oneOfList(value: string, numbers: boolean): string | undefined {
  const items = oneOfItems(value, numbers);
  return items === undefined ? undefined : `[${items.join(', ')}]`;
}

/** What the constraint compares: the entity id, or the context property by its name. */
export function constraintSubject(c: Pick<ConstraintLike, 'type' | 'property'>): string {
  return c.type === 'ENTITY_ID_COMPARISON_TYPE' ? 'entity id' : c.property;
}

/** One constraint as a sentence. Operators Flipt never matches say so. */
export function constraintText(c: ConstraintLike): string {
  const subject = constraintSubject(c);
  const op = c.operator;
  switch (c.type) {
    case 'STRING_COMPARISON_TYPE':
    case 'ENTITY_ID_COMPARISON_TYPE':
      return `${subject} ${stringPredicate(op, c.value)}`;
    case 'NUMBER_COMPARISON_TYPE':
      return `${subject} ${numberPredicate(op, c.value)}`;
    case 'DATETIME_COMPARISON_TYPE':
      return `${subject} ${datetimePredicate(op, c.value)}`;
    case 'BOOLEAN_COMPARISON_TYPE':
      return `${subject} ${booleanPredicate(op)}`;
    default:
      return `${subject} ${op}${c.value === '' ? '' : ` ${quoted(c.value)}`} (unknown type ${c.type})`;
  }
}

function oneOf(op: 'isoneof' | 'isnotoneof', value: string, numbers: boolean): string {
  const list = oneOfList(value, numbers);
  const words = op === 'isoneof' ? 'is one of' : 'is not one of';
  if (list === undefined) return `${words} ${quoted(value)} (not a JSON array of ${numbers ? 'numbers' : 'strings'}: never matches)`;
  return `${words} ${list}`;
}

function unknownOperator(op: string, value: string): string {
  return `${op}${value === '' ? '' : ` ${value}`} (no such operator for this type: never matches)`;
}

function stringPredicate(op: string, value: string): string {
  switch (op) {
    case 'eq':
      return `is ${quoted(value)}`;
    case 'neq':
      return `is not ${quoted(value)}`;
    case 'empty':
      return 'is empty';
    case 'notempty':
      return 'is not empty';
    case 'prefix':
      return `starts with ${quoted(value)}`;
    case 'suffix':
      return `ends with ${quoted(value)}`;
    case 'contains':
      return `contains ${quoted(value)}`;
    case 'notcontains':
      return `does not contain ${quoted(value)}`;
    case 'isoneof':
    case 'isnotoneof':
      return oneOf(op, value, false);
    default:
      return unknownOperator(op, value === '' ? '' : quoted(value));
  }
}

function numberPredicate(op: string, value: string): string {
  const sign = NUMBER_SIGNS[op];
  if (sign !== undefined) return `${sign} ${value}`;
  switch (op) {
    case 'present':
      return 'is present';
    case 'notpresent':
      return 'is not present';
    case 'isoneof':
    case 'isnotoneof':
      return oneOf(op, value, true);
    default:
      return unknownOperator(op, value);
  }
}

function datetimePredicate(op: string, value: string): string {
  const words = DATETIME_WORDS[op];
  if (words !== undefined) return `${words} ${value}`;
  if (op === 'present') return 'is present';
  if (op === 'notpresent') return 'is not present';
  return unknownOperator(op, value);
}

function booleanPredicate(op: string): string {
  switch (op) {
    case 'true':
      return 'is true';
    case 'false':
      return 'is false';
    case 'present':
      return 'is present';
    case 'notpresent':
      return 'is not present';
    default:
      return unknownOperator(op, '');
  }
}

/**
 * A one-of list that changed, as the values added and removed (`added DE; removed FR`), when both
 * sides are valid lists of the same type; undefined otherwise (the caller shows both sentences).
 */
export function oneOfChange(from: ConstraintLike, to: ConstraintLike): string | undefined {
  if (from.type !== to.type || from.property !== to.property || from.operator !== to.operator) return undefined;
  if (from.operator !== 'isoneof' && from.operator !== 'isnotoneof') return undefined;
  const numbers = from.type === 'NUMBER_COMPARISON_TYPE';
  const before = oneOfItems(from.value, numbers);
  const after = oneOfItems(to.value, numbers);
  if (before === undefined || after === undefined) return undefined;
  const had = new Set(before);
  const has = new Set(after);
  const added = after.filter((v) => !had.has(v));
  const removed = before.filter((v) => !has.has(v));
  const parts: string[] = [];
  if (added.length > 0) parts.push(`added ${added.join(', ')}`);
  if (removed.length > 0) parts.push(`removed ${removed.join(', ')}`);
  const words = `${constraintSubject(from)} ${from.operator === 'isoneof' ? 'is one of' : 'is not one of'}`;
  return `${words}: ${parts.length > 0 ? parts.join('; ') : 'the same values, reordered'}`;
}

/** `ALL` / `ANY`, for lists. */
export function matchTypeLabel(matchType: string): string {
  return matchType === 'ANY_MATCH_TYPE' ? 'ANY' : 'ALL';
}

/** What the match type means for an entity, for the segment page. */
export function matchTypeSentence(matchType: string, constraintCount: number): string {
  if (constraintCount === 0) return 'No constraints: every entity is in this segment.';
  return matchType === 'ANY_MATCH_TYPE'
    ? 'An entity is in this segment when any of these constraints match:'
    : 'An entity is in this segment when all of these constraints match:';
}
