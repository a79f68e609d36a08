/**
 * The enumerations of Flipt's declarative state, as the string names the API serves
 * (`VARIANT_FLAG_TYPE`...). Types only: the snapshot (snapshot.ts), the compiled program
 * (compiled.ts) and every layer above share them.
 */
export type FlagType = 'VARIANT_FLAG_TYPE' | 'BOOLEAN_FLAG_TYPE';
export type MatchType = 'ALL_MATCH_TYPE' | 'ANY_MATCH_TYPE';
export type SegmentOperator = 'OR_SEGMENT_OPERATOR' | 'AND_SEGMENT_OPERATOR';
export type ComparisonType =
  | 'STRING_COMPARISON_TYPE'
  | 'NUMBER_COMPARISON_TYPE'
  | 'BOOLEAN_COMPARISON_TYPE'
  | 'DATETIME_COMPARISON_TYPE'
  | 'ENTITY_ID_COMPARISON_TYPE';
export type RolloutType = 'UNKNOWN_ROLLOUT_TYPE' | 'SEGMENT_ROLLOUT_TYPE' | 'THRESHOLD_ROLLOUT_TYPE';
