/**
 * Folders of the installed package. This module sits two levels below the package root both when
 * run from source (src/config/paths.ts under tsx) and when built (dist/config/paths.js), so the
 * same relative URLs work in both layouts.
 */
import { fileURLToPath } from 'node:url';

/** The bundled example state repository, served when no storage.local.path is configured. */
export const BUNDLED_EXAMPLES_DIR = fileURLToPath(new URL('../../examples', import.meta.url));

/** The JSON Schema of the server configuration. */
export const CONFIG_SCHEMA_PATH = fileURLToPath(new URL('../../schemas/config.schema.json', import.meta.url));
