import { useState } from 'react'
import Header from './components/Header.jsx'
import Toolbar from './components/Toolbar.jsx'
import BookList from './components/BookList.jsx'
import Footer from './components/Footer.jsx'
import { books } from './books.js'
import './App.css'

function matches(book, query) {
  const q = query.trim().toLowerCase()
  return !q || book.title.toLowerCase().includes(q) || book.author.toLowerCase().includes(q)
}

export default function App() {
  const [query, setQuery] = useState('')
  const [basket, setBasket] = useState([])
  const shown = books.filter((book) => matches(book, query))
  const add = (book) => setBasket((items) => [...items, book.id])
  return (
    <div className="shop">
      <Header count={basket.length} />
      <BookList books={shown} onAdd={add}>
        <Toolbar query={query} onQuery={setQuery} />
      </BookList>
      <Footer />
    </div>
  )
}
