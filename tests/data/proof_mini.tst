loadsgf games/x.sgf 12
1 attack E3
#? [0]
2 defend F1
#? [1 (G1|H1)]
