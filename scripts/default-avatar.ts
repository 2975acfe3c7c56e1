/**
 * Draws public/default-avatar.png, the avatar search shows for a user without one (docs/api.md):
 * a grey silhouette on a light square, 128 × 128, antialiased by 4 × 4 supersampling. Run
 * `npx tsx scripts/default-avatar.ts` after changing it; the PNG is committed, so the service
 * itself never draws anything.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';

const SIZE = 128;
const SAMPLES = 4;
const BACKGROUND = [0xe2, 0xe8, 0xf0];
const FIGURE = [0x94, 0xa3, 0xb8];

/** Whether a point (in units of the image side, 0–1) lies on the figure: a head and shoulders. */
function onFigure(x: number, y: number): boolean {
  const head = (x - 0.5) ** 2 + (y - 0.4) ** 2 <= 0.17 ** 2;
  const shoulders = ((x - 0.5) / 0.33) ** 2 + ((y - 0.98) / 0.36) ** 2 <= 1;
  return head || shoulders;
}

const rows: Buffer[] = [];
for (let py = 0; py < SIZE; py++) {
  const row = Buffer.alloc(1 + SIZE * 3); // filter byte 0, then RGB
  for (let px = 0; px < SIZE; px++) {
    let covered = 0;
    for (let sy = 0; sy < SAMPLES; sy++)
      for (let sx = 0; sx < SAMPLES; sx++)
        if (onFigure((px + (sx + 0.5) / SAMPLES) / SIZE, (py + (sy + 0.5) / SAMPLES) / SIZE)) covered++;
    const share = covered / SAMPLES ** 2;
    for (let c = 0; c < 3; c++)
      row[1 + px * 3 + c] = Math.round(
        (BACKGROUND[c] as number) * (1 - share) + (FIGURE[c] as number) * share,
      );
  }
  rows.push(row);
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (const byte of data) c = (CRC_TABLE[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** One PNG chunk: length, type, data, CRC of type and data (PNG §5.3). */
function chunk(type: string, data: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

const header = Buffer.alloc(13);
header.writeUInt32BE(SIZE, 0);
header.writeUInt32BE(SIZE, 4);
header.writeUInt8(8, 8); // bit depth
header.writeUInt8(2, 9); // colour type: RGB
const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk('IHDR', header),
  chunk('IDAT', deflateSync(Buffer.concat(rows), { level: 9 })),
  chunk('IEND', Buffer.alloc(0)),
]);
writeFileSync(path.join(import.meta.dirname, '..', 'public', 'default-avatar.png'), png);
process.stdout.write(`public/default-avatar.png: ${png.length} bytes\n`);
