// The board's columns and the cards on it when the page opens.
export const COLUMNS = ['To do', 'Doing', 'Done']

export const initialCards = [
  { id: 1, title: 'Write release notes', column: 'To do' },
  { id: 2, title: 'Order new name badges', column: 'To do' },
  { id: 3, title: 'Plan the team picnic', column: 'To do' },
  { id: 4, title: 'Fix login timeout', column: 'Doing' },
  { id: 5, title: 'Draft the autumn survey', column: 'Doing' },
  { id: 6, title: 'Set up staging server', column: 'Done' },
  { id: 7, title: 'Archive old tickets', column: 'Done' },
]
