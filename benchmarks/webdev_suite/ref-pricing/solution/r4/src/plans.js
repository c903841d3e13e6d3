export const PLANS = [
  { name: 'Starter', audience: 'For freelancers and small studios', monthly: 15, yearly: 12 },
  { name: 'Team', audience: 'For growing agencies', monthly: 35, yearly: 28, featured: true },
  { name: 'Business', audience: 'For firms with many clients', monthly: 90, yearly: 72 },
]

export const FAQ = [
  ['Can I change plans later?', 'Yes, switch at any time from Settings and we prorate the difference on your next invoice.'],
  ['Is there a free trial?', 'Every plan starts with 14 days free. We only ask for a card when the trial ends.'],
  ['What counts as a team member?', 'Anyone who logs time in your workspace. Clients who only view reports are free.'],
  ['How do I pay?', 'By card on every plan, or by invoice once a year on Business.'],
  ['Do you offer discounts for nonprofits?', 'Yes, 30% off every plan. Write to us from your organisation email and we apply it.'],
]
