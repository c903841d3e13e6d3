import Header from './components/Header.jsx'
import BookList from './components/BookList.jsx'
import Footer from './components/Footer.jsx'
import { books } from './books.js'
import './App.css'

export default function App() {
  return (
    <div className="shop">
      <Header />
      <BookList books={books} />
      <Footer />
    </div>
  )
}
