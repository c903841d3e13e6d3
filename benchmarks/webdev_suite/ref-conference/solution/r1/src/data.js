export const speakers = [
  {
    id: 'mira', initials: 'MO', name: 'Mira Okafor', role: 'Staff engineer, Tidewater Labs',
    talk: 'Small teams, big systems', tone: 'a1',
    bio: 'Mira has spent ten years keeping payment systems running with teams of five or fewer. She writes about boring technology and on-call habits that last.',
  },
  {
    id: 'jonas', initials: 'JW', name: 'Jonas Whitfield', role: 'API lead, Ferrow',
    talk: 'Type-safe APIs without the ceremony', tone: 'a2',
    bio: 'Jonas leads the public API team at Ferrow. He cares about schemas that humans can read and error messages that explain themselves.',
  },
  {
    id: 'lena', initials: 'LC', name: 'Lena Castellanos', role: 'Performance consultant',
    talk: 'Profiling web apps, hands on', tone: 'a3',
    bio: 'Lena helps shops and newsrooms make slow pages fast. Her workshop brings real traces from real sites.',
  },
  {
    id: 'tomasz', initials: 'TB', name: 'Tomasz Brandt', role: 'Database engineer, Quayline',
    talk: 'Databases at the edge', tone: 'a4',
    bio: 'Tomasz builds replicated storage for ferry timetables along the coast. He has opinions about clocks.',
  },
]

export const days = [
  {
    id: 'day1', label: 'Day 1', date: 'Friday 12 September',
    sessions: [
      ['09:00', 'Registration and coffee', '–'],
      ['09:30', 'Opening keynote: Small teams, big systems', 'Mira Okafor'],
      ['10:45', 'Type-safe APIs without the ceremony', 'Jonas Whitfield'],
      ['12:00', 'Lunch on the terrace', '–'],
      ['13:30', 'Workshop: Profiling web apps, hands on', 'Lena Castellanos'],
    ],
  },
  {
    id: 'day2', label: 'Day 2', date: 'Saturday 13 September',
    sessions: [
      ['09:30', 'Databases at the edge', 'Tomasz Brandt'],
      ['10:45', 'Lightning talks', 'Community'],
      ['12:00', 'Harbour walk and lunch', '–'],
      ['13:30', 'Closing panel: What we would build again', 'All speakers'],
    ],
  },
]
