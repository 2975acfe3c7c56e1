import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fastSerializer, responseSerializerCompiler } from '../../src/http/serializer.js';

/* Responses are written by fast-json-stringify from the routes' zod schemas (src/http/serializer.ts). */

const schema = z.object({
  ok: z.literal(true),
  name: z.string(),
  note: z.string().nullable(),
  count: z.number().int(),
  items: z.array(z.object({ id: z.string() })),
});

function compile(verify: boolean, responseSchema: z.ZodType = schema) {
  return responseSerializerCompiler({ verify })({
    schema: responseSchema,
    method: 'GET',
    url: '/x',
    httpStatus: '200',
  } as never);
}

describe('the response serializer', () => {
  it('writes what the schema names, and drops a field a handler returns by mistake', () => {
    const serialize = compile(false);
    const body = JSON.parse(
      serialize({ ok: true, name: 'a', note: null, count: 2, items: [{ id: 'x', secret: 's' }], hash: 'h' }),
    );
    expect(body).toEqual({ ok: true, name: 'a', note: null, count: 2, items: [{ id: 'x' }] });
  });

  it('writes a nullable string both ways', () => {
    const serialize = compile(false);
    expect(JSON.parse(serialize({ ok: true, name: 'a', note: 'n', count: 0, items: [] })).note).toBe('n');
  });

  it('checks each answer against the zod schema outside production', () => {
    const serialize = compile(true);
    expect(() => serialize({ ok: true, name: 'a', note: null, count: 1.5, items: [] })).toThrow();
    expect(() => serialize({ ok: true, name: 7, note: null, count: 1, items: [] })).toThrow();
    expect(serialize({ ok: true, name: 'a', note: null, count: 1, items: [] })).toBe(
      '{"ok":true,"name":"a","note":null,"count":1,"items":[]}',
    );
  });

  it('keeps the zod serializer for a schema JSON Schema cannot express', () => {
    const transformed = z.object({ at: z.date() });
    expect(fastSerializer(transformed)).toBeUndefined();
    const serialize = compile(false, transformed);
    expect(JSON.parse(serialize({ at: new Date('2026-01-01T00:00:00Z') }))).toEqual({
      at: '2026-01-01T00:00:00.000Z',
    });
  });
});
