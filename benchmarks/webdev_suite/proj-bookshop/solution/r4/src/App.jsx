import { useState } from 'react'
import Header from './components/Header.jsx'
import Toolbar from './components/Toolbar.jsx'
import BookList from './components/BookList.jsx'
import Footer from './components/Footer.jsx'
import { books } from './books.js'
import './App.css'

export const GENRES = ['Fiction', 'Mystery', 'Nature', 'Cooking']

function matches(book, query, genre) {
  const q = query.trim().toLowerCase()
  const byText = !q || book.title.toLowerCase().includes(q) || book.author.toLowerCase().includes(q)
  return byText && (!genre || book.genre === genre)
}

export default function App() {
  const [query, setQuery] = useState('')
  const [genre, setGenre] = useState('')
  const [basket, setBasket] = useState([])
  const shown = books.filter((book) => matches(book, query, genre))
  const add = (book) => setBasket((items) => [...items, book.id])
  return (
    <div className="shop">
      <Header count={basket.length} />
      <BookList books={shown} onAdd={add}>
        <Toolbar query={query} onQuery={setQuery} genres={GENRES} genre={genre} onGenre={setGenre} />
      </BookList>
      <Footer />
    </div>
  )
}
