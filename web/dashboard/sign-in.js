/* idlegrid dashboard sign-in: the token goes once in a header to /session, which answers with an
   HttpOnly cookie; it never enters a URL (no address bar, no history, no server log). */
/* global location */
'use strict'
document.getElementById('sign-in').addEventListener('submit', async (event) => {
  event.preventDefault()
  const token = document.getElementById('token').value.trim()
  const problem = document.getElementById('problem')
  problem.textContent = ''
  const res = await fetch('/session', { headers: { authorization: `Bearer ${token}` }, credentials: 'same-origin' }).catch(() => undefined)
  if (res?.status === 204) { location.replace(`/${location.hash}`); return }
  problem.textContent = res == null ? 'the node did not answer' : 'that is not this node\'s token'
})
