/*
 * The two databases behind one handle. A process that knows which one it opens imports
 * ./pglite.js or ./postgres.js alone: each driver costs its own module loading at start-up.
 */
export * from './database-handle.js';
export { openPglite } from './pglite.js';
export { openPostgres } from './postgres.js';
