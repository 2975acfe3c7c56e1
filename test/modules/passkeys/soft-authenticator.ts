// A software WebAuthn authenticator (fmt "none", ES256), so the ceremonies run end to end without
// a browser: it builds what navigator.credentials would answer, as @simplewebauthn/browser encodes it.
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto';
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';

type Cbor = number | string | Uint8Array | Cbor[] | Map<Cbor, Cbor>;

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 256) return Buffer.from([(major << 5) | 24, n]);
  if (n < 65536) return Buffer.from([(major << 5) | 25, n >> 8, n & 255]);
  const out = Buffer.alloc(5);
  out[0] = (major << 5) | 26;
  out.writeUInt32BE(n, 1);
  return out;
}

/** RFC 8949 for the few types an attestation object holds. */
export function cbor(value: Cbor): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([head(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value]);
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cbor)]);
  return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

const UP = 0x01;
const UV = 0x04;
const BE = 0x08;
const BS = 0x10;
const AT = 0x40;

interface Credential {
  id: Buffer;
  key: KeyObject;
  publicKey: KeyObject;
  counter: number;
  userHandle: string;
}

export interface Gesture {
  /** Whether the authenticator verified the user (PIN, biometrics): the UV flag. */
  userVerified?: boolean;
  /** The page's origin as the browser reports it in clientDataJSON. */
  origin?: string;
}

export class SoftAuthenticator {
  readonly credentials: Credential[] = [];

  constructor(
    private readonly site: { origin: string; rpId: string },
    private readonly options: { aaguid?: string; backedUp?: boolean } = {},
  ) {}

  private flags(gesture: Gesture, extra = 0): number {
    const backup = this.options.backedUp ? BE | BS : 0;
    return UP | (gesture.userVerified === false ? 0 : UV) | backup | extra;
  }

  private clientData(type: string, challenge: string, gesture: Gesture): Buffer {
    return Buffer.from(
      JSON.stringify({ type, challenge, origin: gesture.origin ?? this.site.origin, crossOrigin: false }),
    );
  }

  /** navigator.credentials.create: a new discoverable credential; refuses an excluded one as a browser does. */
  register(options: PublicKeyCredentialCreationOptionsJSON, gesture: Gesture = {}): RegistrationResponseJSON {
    const excluded = new Set((options.excludeCredentials ?? []).map((c) => c.id));
    if (this.credentials.some((c) => excluded.has(c.id.toString('base64url'))))
      throw Object.assign(new Error('excluded'), { name: 'InvalidStateError' });
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const id = randomBytes(32);
    const credential: Credential = {
      id,
      key: privateKey,
      publicKey,
      counter: 0,
      userHandle: options.user.id,
    };
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = cbor(
      new Map<Cbor, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x ?? '', 'base64url')],
        [-3, Buffer.from(jwk.y ?? '', 'base64url')],
      ]),
    );
    const aaguid = Buffer.from(
      (this.options.aaguid ?? '00000000-0000-0000-0000-000000000000').replaceAll('-', ''),
      'hex',
    );
    const length = Buffer.alloc(2);
    length.writeUInt16BE(id.length);
    const authData = Buffer.concat([
      createHash('sha256')
        .update(options.rp.id ?? this.site.rpId)
        .digest(),
      Buffer.from([this.flags(gesture, AT)]),
      Buffer.alloc(4),
      aaguid,
      length,
      id,
      cose,
    ]);
    const attestationObject = cbor(
      new Map<Cbor, Cbor>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    this.credentials.push(credential);
    return {
      id: id.toString('base64url'),
      rawId: id.toString('base64url'),
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: this.clientData('webauthn.create', options.challenge, gesture).toString('base64url'),
        attestationObject: attestationObject.toString('base64url'),
        transports: ['internal'],
      },
    };
  }

  /** navigator.credentials.get with a discoverable credential (the newest, or the one given). */
  authenticate(
    options: PublicKeyCredentialRequestOptionsJSON,
    gesture: Gesture & { credential?: Credential; counter?: number } = {},
  ): AuthenticationResponseJSON {
    const credential = gesture.credential ?? this.credentials.at(-1);
    if (!credential) throw new Error('no credential');
    credential.counter = gesture.counter ?? credential.counter + 1;
    const count = Buffer.alloc(4);
    count.writeUInt32BE(credential.counter);
    const authData = Buffer.concat([
      createHash('sha256')
        .update(options.rpId ?? this.site.rpId)
        .digest(),
      Buffer.from([this.flags(gesture)]),
      count,
    ]);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, gesture);
    const signature = sign(
      'sha256',
      Buffer.concat([authData, createHash('sha256').update(clientDataJSON).digest()]),
      credential.key,
    );
    return {
      id: credential.id.toString('base64url'),
      rawId: credential.id.toString('base64url'),
      type: 'public-key',
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
      response: {
        clientDataJSON: clientDataJSON.toString('base64url'),
        authenticatorData: authData.toString('base64url'),
        signature: signature.toString('base64url'),
        userHandle: credential.userHandle,
      },
    };
  }
}
