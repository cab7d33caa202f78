object f2a40cac9b454a39eec2b3ace982d8938f9e30e7d4043fdb07b137eabbde9080
type commit
tag s1
tagger C O Mitter <c@example.com> 1700000100 +0100

sha256 tag
