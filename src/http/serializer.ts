import { isDeepStrictEqual } from 'node:util';
import fastJson from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify';
import { createSerializerCompiler } from 'fastify-type-provider-zod';
import { type ZodType, z } from 'zod';

const zodSerializerCompiler = createSerializerCompiler({});

/** A JSON Schema node, as z.toJSONSchema writes it. */
type JsonSchema = { [key: string]: unknown };

/**
 * `anyOf: [X, {type: 'null'}]` (how zod writes `.nullable()`) as `type: [X.type, 'null']` where X
 * is a plain typed schema: fast-json-stringify picks an anyOf branch by validating the value each
 * time, but serializes a type list directly.
 */
function simplifyNullable(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(simplifyNullable);
  if (typeof node !== 'object' || node === null) return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) out[key] = simplifyNullable(value);
  const anyOf = out.anyOf;
  if (Array.isArray(anyOf) && anyOf.length === 2) {
    const [first, second] = anyOf as JsonSchema[];
    const [other, nul] = second?.type === 'null' ? [first, second] : [second, first];
    if (
      nul?.type === 'null' &&
      Object.keys(nul).length === 1 &&
      typeof other?.type === 'string' &&
      other.type !== 'object' &&
      other.type !== 'array'
    ) {
      delete out.anyOf;
      return { ...out, ...other, type: [other.type, 'null'] };
    }
  }
  return out;
}

/** A fast-json-stringify function for a zod response schema, or undefined where it has no JSON Schema. */
export function fastSerializer(schema: ZodType): ((data: unknown) => string) | undefined {
  try {
    const jsonSchema = z.toJSONSchema(schema, {
      io: 'output',
      target: 'draft-07',
      unrepresentable: 'throw',
    });
    return fastJson(simplifyNullable(jsonSchema) as Parameters<typeof fastJson>[0]);
  } catch {
    return undefined;
  }
}

/**
 * fast-json-stringify, compiled per route from its zod response schema: a field returned by mistake
 * never leaves the service, at a small part of a zod parse's cost. Transforms keep the zod serializer.
 * With `verify` (all but production) zod encodes each answer too and both outputs must agree, so the
 * test suite proves the fast serializer on every response it sees.
 */
export function responseSerializerCompiler(options: {
  verify: boolean;
}): FastifySerializerCompiler<ZodType | { properties: ZodType }> {
  return (route) => {
    const viaZod = zodSerializerCompiler(route);
    const fast = route.schema instanceof z.ZodType ? fastSerializer(route.schema) : undefined;
    if (!fast) return viaZod;
    if (!options.verify) return fast;
    return (data: unknown) => {
      const expected = viaZod(data);
      const actual = fast(data);
      if (!isDeepStrictEqual(JSON.parse(actual), JSON.parse(expected))) {
        throw new Error(
          `${route.method} ${route.url}: fast-json-stringify wrote ${actual} where the zod schema gives ${expected}`,
        );
      }
      return actual;
    };
  };
}
