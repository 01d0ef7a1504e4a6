// @ts-check
/**
 * The API key both pages use, kept in this browser's localStorage (in memory
 * when storage is refused) and sent only to this server's API.
 */
import { byId } from "./dom.js"

const STORAGE = "periscope.apiKey"
let memory = ""

/** The saved key, or "" when there is none. */
export const apiKey = () => {
  try {
    return localStorage.getItem(STORAGE) || memory
  } catch {
    return memory
  }
}

/** @param {string} value */
const save = (value) => {
  memory = value
  try {
    if (value) localStorage.setItem(STORAGE, value)
    else localStorage.removeItem(STORAGE)
  } catch {
    // storage refused (private mode): the key lives in memory until reload
  }
}

/**
 * Wires the key form (key-form.html): Save and Forget store the key and call
 * onChange with the new one.
 * @param {(key: string) => void} onChange
 */
export const initKeyForm = (onChange) => {
  const input = byId("api-key", HTMLInputElement)
  const status = byId("key-status")
  const show = () => {
    const has = apiKey() !== ""
    status.textContent = has ? "Key saved in this browser." : "No key saved: requests will be refused (401)."
    status.classList.toggle("bad", !has)
  }
  input.value = apiKey()
  show()
  byId("key-form", HTMLFormElement).addEventListener("submit", (event) => {
    event.preventDefault()
    save(input.value.trim())
    show()
    onChange(apiKey())
  })
  byId("key-forget", HTMLButtonElement).addEventListener("click", () => {
    save("")
    input.value = ""
    show()
    input.focus()
    onChange("")
  })
}
