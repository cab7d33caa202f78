object 25b34b2463bde02951bad74f9690ebffbf68ca40
type commit
tag v1
tagger C O Mitter <c@example.com> 1700000100 +0100

version one
