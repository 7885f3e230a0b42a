"""Placeholder until the real page lands (another helper writes it)."""
import streamlit as st

st.title("voting_lab")
st.info("This page is being built.")
