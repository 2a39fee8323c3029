"""Territory CRF (Stern, Graepel, MacKay, NIPS 2004): Boltzmann5 model, loopy BP, exact inference."""
