const http = require('node:http')

const PAGE = "<!doctype html><html><body><h1>Habit tracker</h1><p>Done today: 0 of 3</p>\n<button>All</button><button>Done</button><button>Open</button>\n<table><tr><th>Habit</th><th>Today</th><th>Streak</th></tr>\n<tr><td>Drink water</td><td><input type=\"checkbox\"></td><td>4 days</td></tr>\n<tr><td>Read 20 minutes</td><td><input type=\"checkbox\"></td><td>2 days</td></tr>\n<tr><td>Walk 5000 steps</td><td><input type=\"checkbox\"></td><td>0 days</td></tr></table>\n<input placeholder=\"New habit\"><button>Add</button><button>Delete</button></body></html>"
http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' })
  res.end(PAGE)
}).listen(4173, '127.0.0.1')
