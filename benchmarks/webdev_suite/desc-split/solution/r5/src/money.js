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

// One row per person: what they paid, an equal share of the total, and paid minus share.
export function balances(expenses) {
  const share = total(expenses) / PEOPLE.length
  return PEOPLE.map((person) => {
    const paid = expenses.filter((e) => e.payer === person).reduce((sum, e) => sum + e.cents, 0)
    return { person, paid, share, balance: paid - share }
  })
}

export function signed(cents) {
  const rounded = Math.round(cents)
  return rounded > 0 ? `+${euros(rounded)}` : euros(rounded)
}

// The payments that square everyone: the biggest debtor pays the biggest creditor, and so on.
export function settlements(expenses) {
  const rows = balances(expenses).map((r) => ({ person: r.person, left: Math.round(r.balance) }))
  const debtors = rows.filter((r) => r.left < -1).sort((a, b) => a.left - b.left)
  const creditors = rows.filter((r) => r.left > 1).sort((a, b) => b.left - a.left)
  const payments = []
  let d = 0
  let c = 0
  while (d < debtors.length && c < creditors.length) {
    const amount = Math.min(-debtors[d].left, creditors[c].left)
    if (amount > 1) payments.push({ from: debtors[d].person, to: creditors[c].person, cents: amount })
    debtors[d].left += amount
    creditors[c].left -= amount
    if (debtors[d].left >= -1) d += 1
    if (creditors[c].left <= 1) c += 1
  }
  return payments
}
