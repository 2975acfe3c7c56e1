/**
 * What one id_token costs in each signing algorithm (docs/oauth.md, "Signing keys"): CPU time to
 * generate a key, to sign an id_token with jose as the token endpoint does, and to verify one as a
 * site does, plus the token's size. CPU time (of every thread of the process) rather than wall
 * time, so that other work on the machine changes the figures less. Run: `npx tsx bench/signing-algorithms.ts`.
 */
import { generateKeyPair, jwtVerify, SignJWT } from 'jose';
import { SIGNING_ALGORITHMS } from '../src/lib/signing-algorithms.js';

const ROUNDS = 7;
const PER_ROUND = 1000;
const claims = {
  iss: 'https://id.example',
  sub: '42',
  aud: 'pk_4mXbQ2vN8rT1yW6zK3pL9s',
  iat: 1_780_000_000,
  exp: 1_780_003_600,
  auth_time: 1_780_000_000,
  nonce: 'n-0S6_WzA2Mj',
  name: 'Alice',
  email: 'alice@example.com',
};

function cpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
}

async function cpuOf(work: () => Promise<unknown>, times: number): Promise<number> {
  const start = cpuMs();
  for (let i = 0; i < times; i++) await work();
  return (cpuMs() - start) / times;
}

for (const alg of SIGNING_ALGORITHMS) {
  const generate = () => generateKeyPair(alg, { extractable: true });
  const keygen: number[] = [];
  for (let i = 0; i < ROUNDS; i++) keygen.push(await cpuOf(generate, 1));
  const { privateKey, publicKey } = await generate();
  const sign = () => new SignJWT(claims).setProtectedHeader({ alg, kid: 'k', typ: 'JWT' }).sign(privateKey);
  const token = await sign();
  const verify = () => jwtVerify(token, publicKey, { currentDate: new Date(claims.iat * 1000) });
  await cpuOf(sign, PER_ROUND); // warm-up
  const signs: number[] = [];
  const verifies: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    signs.push(await cpuOf(sign, PER_ROUND));
    verifies.push(await cpuOf(verify, PER_ROUND));
  }
  console.log(
    `${alg.padEnd(6)} key ${median(keygen).toFixed(1)} ms, sign ${(median(signs) * 1000).toFixed(0)} µs, ` +
      `verify ${(median(verifies) * 1000).toFixed(0)} µs, id_token ${token.length} bytes`,
  );
}
