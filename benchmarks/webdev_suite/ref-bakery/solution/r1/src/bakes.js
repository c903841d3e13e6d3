export const BAKES = [
  { name: 'Country sourdough', note: 'Three-day ferment, crackling crust.', price: '£4.20', pic: 'bread1' },
  { name: 'Seeded rye', note: 'Dark rye with sunflower and flax.', price: '£3.80', pic: 'bread2' },
  { name: 'Butter croissant', note: 'Laminated over two days, all butter.', price: '£2.10', pic: 'pastry1' },
  { name: 'Cardamom bun', note: 'Knotted and rolled in pearl sugar.', price: '£2.60', pic: 'pastry2' },
  { name: 'Lemon drizzle slice', note: 'Sharp glaze on a soft sponge.', price: '£3.00', pic: 'cake1' },
  { name: 'Plum frangipane tart', note: 'Almond cream and roasted plums.', price: '£3.40', pic: 'cake2' },
]

export const HOURS = [
  ['Monday', 'Closed'],
  ['Tuesday – Friday', '7:00 – 18:00'],
  ['Saturday', '7:30 – 16:00'],
  ['Sunday', '8:00 – 13:00'],
]
