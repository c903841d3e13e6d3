// Amounts are kept in cents; shown in euros with two decimals.
export const PEOPLE = ['Ana', 'Ben', 'Chloe']

export const INITIAL_EXPENSES = [
  { id: 1, payer: 'Ana', description: 'Hotel', cents: 24000 },
  { id: 2, payer: 'Ben', description: 'Dinner', cents: 9000 },
  { id: 3, payer: 'Chloe', description: 'Train tickets', cents: 6000 },
]

export function euros(cents) {
  const sign = cents < 0 ? '-' : ''
  return `${sign}€${(Math.abs(cents) / 100).toFixed(2)}`
}

export function total(expenses) {
  return expenses.reduce((sum, e) => sum + e.cents, 0)
}
