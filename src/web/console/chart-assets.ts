import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { FastifyPluginAsync } from 'fastify';
import { sendStatic } from '../assets/assets.routes.js';
import { type VersionedAsset, versioned, versionedAsset } from '../assets/stylesheet.js';

export const UPLOT_SCRIPT_PATH = '/assets/uplot.iife.min.js';
export const UPLOT_STYLESHEET_PATH = '/assets/uplot.min.css';
export const CHARTS_SCRIPT_PATH = '/assets/console-charts.js';

/** A file of the uplot package's dist/, served from this origin, read when first asked for. */
function fromUplot(file: string, routePath: string): () => VersionedAsset {
  let loaded: VersionedAsset | undefined;
  return () => {
    if (!loaded) {
      const require = createRequire(import.meta.url);
      // The package's main file is dist/uPlot.cjs.js; its browser build and stylesheet sit beside it.
      const dist = path.dirname(require.resolve('uplot'));
      loaded = versionedAsset(routePath, readFileSync(path.join(dist, file)));
    }
    return loaded;
  };
}

/**
 * uPlot's browser build (it defines `uPlot`) and its stylesheet, from node_modules, served from this
 * origin so that the CSP's `script-src 'self'` and `style-src 'self'` admit them: no third-party
 * host. uPlot styles its elements through the CSSOM (`element.style`), which the CSP allows.
 */
export const uplotScript = fromUplot('uPlot.iife.min.js', UPLOT_SCRIPT_PATH);
export const uplotStylesheet = fromUplot('uPlot.min.css', UPLOT_STYLESHEET_PATH);

/** public/console-charts.js: draws the dashboard's charts from their data attributes. */
export const chartsScript = versioned('console-charts.js', CHARTS_SCRIPT_PATH);

/** The scripts of a page with charts, in order (the library first). */
export function chartScriptHrefs(): string[] {
  return [uplotScript().href, chartsScript().href];
}

const YEAR = 'public, max-age=31536000, immutable';

/** The routes of the chart assets, versioned in their URLs and cached for a year. */
export const chartAssetRoutes: FastifyPluginAsync = async (app) => {
  for (const [asset, type, description] of [
    [uplotScript(), 'text/javascript; charset=utf-8', 'The chart library of the console (uPlot)'],
    [uplotStylesheet(), 'text/css; charset=utf-8', "The chart library's stylesheet (uPlot)"],
    [chartsScript(), 'text/javascript; charset=utf-8', "The console dashboard's charts"],
  ] as const) {
    app.get(
      asset.path,
      { config: { auth: 'public', description, staticAsset: true } },
      async (request, reply) => sendStatic(request, reply, asset, { type, cacheControl: YEAR }),
    );
  }
};
