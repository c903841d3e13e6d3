// The shop's catalogue. Prices in pounds.
export const books = [
  { id: 1, title: 'The Salt Orchard', author: 'Mira Castell', genre: 'Fiction', price: 12.5,
    cover: 'linear-gradient(135deg, #d9a441, #8c4a2f)' },
  { id: 2, title: 'A Field Guide to Small Clouds', author: 'Tomas Reyes', genre: 'Nature', price: 9.99,
    cover: 'linear-gradient(135deg, #9fc5e8, #3d6f9e)' },
  { id: 3, title: 'Midnight at the Signal Box', author: 'Ada Lindqvist', genre: 'Mystery', price: 11.0,
    cover: 'linear-gradient(135deg, #3b3f58, #12131c)' },
  { id: 4, title: 'Copper Kettle Recipes', author: 'Hanne Okafor', genre: 'Cooking', price: 15.75,
    cover: 'linear-gradient(135deg, #e6915c, #b4502a)' },
  { id: 5, title: 'The Lighthouse Ledger', author: 'Elias Brandt', genre: 'Fiction', price: 13.2,
    cover: 'linear-gradient(135deg, #f3e3b5, #7d9b76)' },
  { id: 6, title: 'Whispers Under the Pier', author: 'Noor Halloran', genre: 'Mystery', price: 8.4,
    cover: 'linear-gradient(135deg, #5e7c8a, #20343d)' },
]
