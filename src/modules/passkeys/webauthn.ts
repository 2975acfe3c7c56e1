/**
 * @simplewebauthn/server, loaded on the first ceremony rather than at start-up: with its ASN.1 and
 * COSE dependencies it costs about a quarter of a second to import, which every start and every
 * CLI command would otherwise pay for a feature most requests never touch.
 */
let loaded: Promise<typeof import('@simplewebauthn/server')> | undefined;

export function webauthnServer(): Promise<typeof import('@simplewebauthn/server')> {
  loaded ??= import('@simplewebauthn/server');
  return loaded;
}
