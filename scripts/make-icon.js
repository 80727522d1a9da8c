'use strict'

// node scripts/make-icon.js: draws assets/httpsys.ico, the Windows executable's icon
// (scripts/build-exe.js puts it there; docs/single-executable.md section 4). Run by hand
// when the mark changes; the .ico is checked in, the build does not run this.
//
// The mark: a rounded square in one blue with a bold geometric "h" in white, drawn on a
// 16-unit grid so that the straight edges fall on whole pixels at 16, 32, 48 and 256 px
// (only the corners and the arch are anti-aliased). Each size is rendered with 8 x 8
// samples a pixel, encoded as a PNG frame (pngjs) and put into the .ico with resedit's
// IconFile: PNG frames are what Windows Vista and later read at every size, and are the
// smallest.

const fs = require('node:fs')
const path = require('node:path')
const { PNG } = require('pngjs')

const OUT = path.join(__dirname, '..', 'assets', 'httpsys.ico')
const SIZES = [16, 32, 48, 256]
const SAMPLES = 8
const BACKGROUND = [0x25, 0x63, 0xeb] // blue
const GLYPH = [0xff, 0xff, 0xff] // white

// on the 16-unit grid
const CORNER = 3 // radius of the square's corners
const STEM = { x0: 3, x1: 6, y0: 2, y1: 14 } // the ascender, full height
const ARCH = { cx: 8, cy: 11.5, outer: 5, inner: 2, bottom: 14 } // shoulder and right leg, 3 wide

function inSquare (x, y) {
  // distance into the nearest corner's circle, when (x, y) is in a corner box
  const cx = Math.min(Math.max(x, CORNER), 16 - CORNER)
  const cy = Math.min(Math.max(y, CORNER), 16 - CORNER)
  return x >= 0 && x <= 16 && y >= 0 && y <= 16 && (x - cx) ** 2 + (y - cy) ** 2 <= CORNER ** 2
}

/** A semicircle on top of a rectangle down to the baseline: the outline of an "n" arch. */
function inArchShape (x, y, r) {
  const { cx, cy, bottom } = ARCH
  if (y > bottom || x < cx - r || x > cx + r) return false
  return y >= cy || (x - cx) ** 2 + (y - cy) ** 2 <= r ** 2
}

function inGlyph (x, y) {
  if (x >= STEM.x0 && x <= STEM.x1 && y >= STEM.y0 && y <= STEM.y1) return true
  return inArchShape(x, y, ARCH.outer) && !inArchShape(x, y, ARCH.inner)
}

/** RGBA pixels (not premultiplied) of the mark at size x size. */
function draw (size) {
  const png = new PNG({ width: size, height: size, colorType: 6 })
  const unit = 16 / size
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      let glyph = 0
      let square = 0
      for (let sy = 0; sy < SAMPLES; sy++) {
        for (let sx = 0; sx < SAMPLES; sx++) {
          const x = (px + (sx + 0.5) / SAMPLES) * unit
          const y = (py + (sy + 0.5) / SAMPLES) * unit
          if (!inSquare(x, y)) continue
          square++
          if (inGlyph(x, y)) glyph++
        }
      }
      const i = (py * size + px) * 4
      const a = square / (SAMPLES * SAMPLES)
      for (let c = 0; c < 3; c++) {
        png.data[i + c] = square ? Math.round((GLYPH[c] * glyph + BACKGROUND[c] * (square - glyph)) / square) : 0
      }
      png.data[i + 3] = Math.round(a * 255)
    }
  }
  return PNG.sync.write(png, { colorType: 6, deflateLevel: 9 })
}

function main () {
  const { Data } = require('resedit')
  const ico = new Data.IconFile()
  for (const size of SIZES) {
    const png = draw(size)
    ico.icons.push({ width: size, height: size, colors: 0, planes: 1, bitCount: 32, data: Data.RawIconItem.from(png, size, size, 32) })
  }
  fs.mkdirSync(path.dirname(OUT), { recursive: true })
  const bin = Buffer.from(ico.generate())
  fs.writeFileSync(OUT, bin)
  console.log(`${path.relative(process.cwd(), OUT)}: ${SIZES.join(', ')} px, ${bin.length} bytes`)
}

if (require.main === module) main()

module.exports = { draw, SIZES }
