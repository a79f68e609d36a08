/**
 * The entity id field of the console and the entity page: required (lib/entity-id.ts says why an
 * id cannot be evaluated; the page shows it here, inline, and sends nothing), with a Generate
 * button that fills in a random UUID for trying a flag on "some entity".
 */
import { entityIdFromBytes } from '../lib/entity-id.js';

export interface EntityFieldProps {
  value: string;
  onChange(value: string): void;
  /** Why the id cannot be evaluated (shown under the field), or undefined. */
  error: string | undefined;
}

export function EntityField({ value, onChange, error }: EntityFieldProps) {
  return (
    <div class="field entity-field">
      <label for="entity-id">Entity id</label>
      <div class="entity-input">
        <input
          id="entity-id"
          value={value}
          placeholder="user-42"
          required
          aria-invalid={error !== undefined}
          aria-describedby={error !== undefined ? 'entity-error' : undefined}
          onInput={(e) => onChange((e.currentTarget as HTMLInputElement).value)}
          autocomplete="off"
          spellcheck={false}
        />
        <button type="button" title="A random entity id (a UUID)" onClick={() => onChange(entityIdFromBytes(crypto.getRandomValues(new Uint8Array(16))))}>
          Generate
        </button>
      </div>
      {error !== undefined && (
        <p id="entity-error" class="field-error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
