"""playouts"""
