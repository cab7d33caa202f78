object 0123456789abcdef0123456789abcdef01234567
type tree2
tag x

m
