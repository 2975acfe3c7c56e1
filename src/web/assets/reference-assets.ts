import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type VersionedAsset, versioned, versionedAsset } from './stylesheet.js';

/** An asset of the API reference: its route, known at startup, and its file, read on first use. */
export interface LazyAsset {
  path: string;
  load: () => VersionedAsset;
}

/** A file of swagger-ui-dist, served from this origin; read when first asked for, not at startup. */
function fromSwaggerUi(file: string, routePath: string): LazyAsset {
  let loaded: VersionedAsset | undefined;
  const load = () => {
    if (!loaded) {
      const require = createRequire(import.meta.url);
      const body = readFileSync(
        path.join(path.dirname(require.resolve('swagger-ui-dist/package.json')), file),
      );
      loaded = versionedAsset(routePath, body);
    }
    return loaded;
  };
  return { path: routePath, load };
}

/** Swagger UI's renderer (React and its plugins in one file, 1.7 MB): it defines `SwaggerUIBundle`. */
export const swaggerUiBundle = fromSwaggerUi('swagger-ui-bundle.js', '/assets/swagger-ui-bundle.js');
/** Swagger UI's stylesheet: no web fonts, its icons as data: URLs. */
export const swaggerUiStylesheet = fromSwaggerUi('swagger-ui.css', '/assets/swagger-ui.css');
/** public/api-reference.js: starts Swagger UI on the OpenAPI document, from a file (no inline script). */
export const referenceScript: LazyAsset = {
  path: '/assets/api-reference.js',
  load: versioned('api-reference.js', '/assets/api-reference.js'),
};
/** public/api-reference.css: the reference page's own layout (a wide page instead of a card). */
export const referenceStylesheet: LazyAsset = {
  path: '/assets/api-reference.css',
  load: versioned('api-reference.css', '/assets/api-reference.css'),
};
