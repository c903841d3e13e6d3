import './App.css'
import Header from './components/Header.jsx'
import Hero from './components/Hero.jsx'
import Speakers from './components/Speakers.jsx'
import Schedule from './components/Schedule.jsx'
import Venue from './components/Venue.jsx'
import Footer from './components/Footer.jsx'

export default function App() {
  return (
    <>
      <Header />
      <main>
        <Hero />
        <Speakers />
        <Schedule />
        <Venue />
      </main>
      <Footer />
    </>
  )
}
