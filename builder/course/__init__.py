"""The course as data: `content/` and `recordings/` in, a validated, frozen Course and one
status per lesson out.

model (course.yml, glossary.yml, lessons' front matter), recording (the schema, version 1),
validation (pydantic, imported only when something is validated), rules (what the JSON
Schemas cannot say, and reading every input file), fingerprint (contentHash,
rendererHash), status (fresh, stale, missing... by hashing only: nothing runs here),
verdict (what `check` says) and schemas (`schema`, `validate`).
"""
