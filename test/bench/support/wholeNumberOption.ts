/** A bench option that must be a whole number of at least 1 (rounds, requests, sizes), from its text; an error naming the option and what it got otherwise. */
export const wholeNumberOption = (name: string, text: string | undefined): number => {
  const value = Number(text)
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number of at least 1; got ${text}`)
  return value
}
