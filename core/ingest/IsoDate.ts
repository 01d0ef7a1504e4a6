// Moved to core/index (the document Schema needs it); kept here until core/search/PublishedDate.ts imports it from there.
export * from "../index/IsoDate.ts"
